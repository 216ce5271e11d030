// A workload deepened to a context depth, for `tune --depth N`: decode slows as the context
// grows (and flash attention's gain grows with it), so decode is measured with every request's
// prompt about N tokens deep. Each request shallower than N gets a prefix of one fixed filler
// text at the start of its first message, sized with the server's own token counts; the same
// prompts are sent to every candidate, so the pairs compare like with like.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gb10tune/bench/workload.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// The first `chars` characters of the filler, cut back to the end of a word: numbered sentences
// of plain English words, the same text in every run.
std::string depth_filler(std::size_t chars);

// The most tokens of prompt every request of `workload` leaves room for in a slot of
// `slot_ctx` tokens: slot_ctx minus the largest max_tokens (0 when even that does not fit).
std::uint64_t deepest_fitting(const Workload& workload, std::uint64_t slot_ctx);

// The depth measured when none is asked: the workload's deepest counted prompt, at most
// deepest_fitting (slot_ctx 0: not capped). 0 when the workload was not counted.
std::uint64_t default_depth(const Workload& workload, std::uint64_t slot_ctx);

// Prefixes every request whose counted prompt is shallower than `depth` with the filler and a
// blank line (at the start of its first message's content) so that `count` finds its prompt
// `depth` tokens deep, or at most 1% (at least 8 tokens) less; its prompt_tokens become that
// count. Requests as deep already stay as written. Every prompt asked about is sent to `count`
// once per call at most. An Error (ExitCode::failed) when the workload was not counted, `count`
// fails, or a first message's content is not text; nothing is changed then.
Status deepen_workload(Workload& workload, std::uint64_t depth, const PromptTokenCounter& count);

}  // namespace gb10tune::bench

// The server benchmark's workload: chat-completion requests read from JSON lines. Realistic
// multi-turn work (K5): a conversation line expands into one request per turn, each carrying
// every earlier turn, so the context grows the way it does in a real session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::bench {

// One chat-completion request of the workload.
struct WorkloadRequest {
  std::string name;     // "refactor-parser/3": conversation and turn (1-based), or "line 7"
  nlohmann::json body;  // the request: messages, max_tokens and any sampling fields given
  std::size_t context_chars = 0;  // characters of all message contents (context size, roughly)
  // The prompt's tokens as the server counts them (its chat template applied, then its
  // tokenizer); 0 when not counted, and then estimated (estimated_slot_tokens).
  std::uint64_t prompt_tokens = 0;
};

// A parsed workload, requests in file order.
struct Workload {
  std::string source;  // the file, or "built-in default workload"
  std::size_t conversations = 0;
  std::vector<WorkloadRequest> requests;
  bool counted = false;  // every request's prompt_tokens came from the server
};

// The server's count of the prompt tokens of a request `body` (its messages through the
// server's chat template, then its tokenizer), or an Error saying why the server could not
// count (an old build without /tokenize or /apply-template, an error answer).
using PromptTokenCounter = std::function<Expected<std::uint64_t>(const nlohmann::json& body)>;

// Parses JSON lines. Each non-blank line is one of
//   {"conversation": NAME, "system": TEXT?, "max_tokens": N?, "turns": [{"user": TEXT,
//    "assistant": TEXT}, …]}  — one request per turn with every earlier turn as history
//    (the recorded assistant replies, so that every run sends the same context);
//    "assistant" may be left out of the last turn only; the line's other fields (temperature,
//    ignore_eos …) go with every turn;
//   {"messages": [{"role": …, "content": …}, …], "max_tokens": N?, "name": NAME?, …} — one
//    request as written (other fields such as temperature are sent along).
// max_tokens defaults to 256. An Error (ExitCode::usage) names `source`, the line and the
// fix; an empty workload is an Error too.
Expected<Workload> parse_workload(std::string_view text, const std::string& source);

// The workload shipped with the tool (configs/workloads/default.jsonl, compiled in): several
// writing and coding conversations with growing context.
const Workload& default_workload();

// Tokens `request` may occupy in its slot, estimated: its context at 4 characters per token
// plus 8 tokens of chat template per message, plus its max_tokens. Byte-level vocabularies
// need far more; slot_tokens uses the server's count when there is one.
std::uint64_t estimated_slot_tokens(const WorkloadRequest& request);

// Tokens `request` occupies in its slot: its counted prompt tokens plus its max_tokens, or
// estimated_slot_tokens when it was not counted.
std::uint64_t slot_tokens(const WorkloadRequest& request);

// `count` with a memory: each distinct request body is sent to the server once (a tune asks
// for the same prompts again while it sizes the depth filler).
PromptTokenCounter remember_counts(PromptTokenCounter count);

// Counts every request's prompt tokens with `count` (an empty `count`: the server cannot).
// Returns "" when all were counted (workload.counted), else one line saying that the sizes are
// estimated and why (the server's first error); no request then keeps a count.
std::string count_workload_tokens(Workload& workload, const PromptTokenCounter& count);

// Refuses a workload whose longest request does not fit a slot of `slot_ctx` tokens (what
// /props reports per slot): an Error naming the conversation and turn, the tokens it needs
// (slot_tokens) and the fixes (--max-context to trim the workload, or a larger per-slot
// context). Ok when every request fits.
Status check_workload_fits(const Workload& workload, std::uint64_t slot_ctx);

// Drops the requests that need more than `max_tokens` (slot_tokens); returns how many were
// dropped. Conversations keep their shorter, earlier turns.
std::size_t trim_workload(Workload& workload, std::uint64_t max_tokens);

// The workload of `prompts` (a JSON-lines file; "" = the shipped one). A usage Error naming the
// file when it cannot be read, or parse_workload's.
Expected<Workload> load_workload(const std::string& prompts);

// Makes `workload` fit a slot: with `max_context` > 0 drops the longer requests (trim_workload;
// the source then says so), then leaves out what is still longer than `slot_ctx` (0: unknown,
// not checked), which would fail with HTTP 400. Returns one line per reason requests were left
// out (none when all stay); a usage Error naming the slot and the fixes when nothing is left.
Expected<std::vector<std::string>> fit_workload(Workload& workload, std::uint64_t max_context,
                                                std::uint64_t slot_ctx);

// What bench server and tune do before the first request: counts the prompt tokens with the
// server's tokenizer (count_workload_tokens; the estimate when it cannot), then fit_workload.
// Returns the lines to print: the fallback's, then the requests left out.
Expected<std::vector<std::string>> fit_workload_to_server(Workload& workload,
                                                          std::uint64_t max_context,
                                                          std::uint64_t slot_ctx,
                                                          const PromptTokenCounter& count);

// The JSON body to POST for `request`: its body with "stream": false (timings come with the
// final, non-streamed answer).
std::string request_json(const WorkloadRequest& request);

}  // namespace gb10tune::bench

// What one decode step of one stream reads at a depth (K12): the weights a token needs, plus the
// caches it attends over — K and V of every token already in the context on full-attention
// layers, at most the window on sliding-window layers, the latent alone with MLA — plus the
// recurrent state of a hybrid's delta-net/SSM layers. The ceiling falls with depth because the
// cache part grows; published GB10 runs keep measured/ceiling about constant over depth with it.
#pragma once

#include <cstdint>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// Bytes of cache one decode step reads at `depth` (tokens already in the stream's context),
// with cache types `k` and `v` and flash attention (V read in its own width): K+V of the
// full-attention layers × depth, of the sliding-window layers × min(depth, window), and the
// recurrent state of one sequence. The main stack only (an MTP head's draft context is not in
// the target step). The Error of ModelFacts::kv_bytes_per_cell for a cache type the model
// cannot use.
Expected<std::uint64_t> cache_bytes_read_at_depth(const model::ModelFacts& model,
                                                  std::uint64_t depth, gguf::GgmlType k,
                                                  gguf::GgmlType v);

// The depths a ceiling is shown at for a context of `context` tokens per slot: 0, then 4096,
// 8192, 16384 … (×2, the depths llama-bench runs are published at) below it, then `context`
// itself (0 alone for 0).
std::vector<std::uint64_t> ceiling_depths(std::uint64_t context);

}  // namespace gb10tune::plan

#include "gb10tune/plan/decode_reads.hpp"

#include <algorithm>

namespace gb10tune::plan {

Expected<std::uint64_t> cache_bytes_read_at_depth(const model::ModelFacts& model,
                                                  std::uint64_t depth, gguf::GgmlType k,
                                                  gguf::GgmlType v) {
  const auto full = model.kv_bytes_per_cell(model::KvScope::full_attention, k, v);
  if (!full) {
    return full.error();
  }
  const auto windowed = model.kv_bytes_per_cell(model::KvScope::sliding_window, k, v);
  if (!windowed) {
    return windowed.error();
  }
  const std::uint64_t window_depth =
      model.sliding_window > 0 ? std::min<std::uint64_t>(depth, model.sliding_window) : depth;
  return *full * depth + *windowed * window_depth + model.recurrent_bytes_per_sequence;
}

std::vector<std::uint64_t> ceiling_depths(std::uint64_t context) {
  std::vector<std::uint64_t> depths = {0};
  for (std::uint64_t d = 4096; d < context; d *= 2) {
    depths.push_back(d);
  }
  if (context > 0) {
    depths.push_back(context);
  }
  return depths;
}

}  // namespace gb10tune::plan

#include "support/split_models.hpp"

#include <fmt/format.h>

#include "support/gguf_writer.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {

std::vector<std::filesystem::path> write_split_report_model(const std::filesystem::path& dir,
                                                            const std::string& stem,
                                                            unsigned shards) {
  const auto split_keys = [shards](GgufWriter& w, unsigned no) {
    w.add("split.no", gguf_uint16(static_cast<std::uint16_t>(no)))
        .add("split.count", gguf_uint16(static_cast<std::uint16_t>(shards)))
        .add("split.tensors.count", gguf_int32(static_cast<std::int32_t>(shards)));
  };
  std::vector<std::filesystem::path> paths;
  for (unsigned no = 0; no < shards; ++no) {
    GgufWriter w = no == 0 ? large_report_model_metadata() : GgufWriter();
    split_keys(w, no);
    if (no == 0) {
      w.tensor("token_embd.weight", {5120, 248320}, gguf::GgmlType::q4_k);
    } else {
      w.tensor(fmt::format("blk.{}.ffn_down.weight", no - 1), {5120, 17408 * 8},
               gguf::GgmlType::q4_k);
    }
    paths.push_back(dir / fmt::format("{}-{:05}-of-{:05}.gguf", stem, no + 1, shards));
    w.write(paths.back());
  }
  return paths;
}

}  // namespace gb10tune::testing

#include "layer_hparams.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

namespace gb10tune::model::detail {

std::string Hparams::key(std::string_view suffix) const {
  return fmt::format("{}.{}", m_arch, suffix);
}

Expected<std::uint32_t> Hparams::u32(std::string_view suffix) const {
  const std::string name = key(suffix);
  const auto value = m_file.get_uint(name);
  if (!value) {
    return value.error();
  }
  return fit(name, *value);
}

Expected<std::uint32_t> Hparams::u32_or(std::string_view suffix, std::uint32_t fallback) const {
  return has(suffix) ? u32(suffix) : Expected<std::uint32_t>(fallback);
}

Expected<std::vector<std::uint32_t>> Hparams::per_layer(std::string_view suffix,
                                                        std::size_t n) const {
  const std::string name = key(suffix);
  const auto values = m_file.get_uint_per_layer(name, n);
  if (!values) {
    return values.error();
  }
  std::vector<std::uint32_t> result;
  result.reserve(values->size());
  for (const std::uint64_t value : *values) {
    const auto narrow = fit(name, value);
    if (!narrow) {
      return narrow.error();
    }
    result.push_back(*narrow);
  }
  return result;
}

Expected<std::vector<std::uint32_t>> Hparams::per_layer_or(
    std::string_view suffix, std::size_t n, std::vector<std::uint32_t> fallback) const {
  return has(suffix) ? per_layer(suffix, n)
                     : Expected<std::vector<std::uint32_t>>(std::move(fallback));
}

bool Hparams::is_array(std::string_view suffix) const {
  const gguf::MetadataEntry* entry = m_file.find(key(suffix));
  return entry != nullptr && entry->value.type() == gguf::ValueType::array;
}

Error Hparams::error(std::string_view suffix, std::string_view problem) const {
  const std::string name = key(suffix);
  const gguf::MetadataEntry* entry = m_file.find(name);
  if (entry == nullptr) {
    return Error{fmt::format("{}: key '{}' {}", m_file.source(), name, problem)};
  }
  return Error{
      fmt::format("{}: offset {}: key '{}' {}", m_file.source(), entry->offset, name, problem)};
}

Expected<std::uint32_t> Hparams::fit(const std::string& name, std::uint64_t value) const {
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    return Error{
        fmt::format("{}: key '{}' is {}, more than llama.cpp's uint32 allows; the "
                    "file is corrupt",
                    m_file.source(), name, value)};
  }
  return static_cast<std::uint32_t>(value);
}

Expected<std::uint32_t> read_nextn_count(const Hparams& hp, std::uint32_t block_count) {
  const auto nextn = hp.u32_or("nextn_predict_layers", 0);
  if (!nextn) {
    return nextn.error();
  }
  if (*nextn >= block_count) {
    return hp.error("nextn_predict_layers",
                    fmt::format("is {}, but it must be less than block_count ({}) as llama.cpp "
                                "asserts",
                                *nextn, block_count));
  }
  return *nextn;
}

}  // namespace gb10tune::model::detail

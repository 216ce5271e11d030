// An architecture's hyperparameters as llama.cpp's loader reads them: "<arch>.<suffix>" keys
// in llama.cpp's uint32 range (private to the model module).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::model::detail {

// Metadata lookups for one architecture. Every Error names the file and the key.
class Hparams {
 public:
  // `file` and `arch` must outlive the Hparams.
  Hparams(const gguf::GgufFile& file, std::string_view arch) : m_file(file), m_arch(arch) {}

  const gguf::GgufFile& file() const { return m_file; }
  // "<arch>.<suffix>".
  std::string key(std::string_view suffix) const;
  bool has(std::string_view suffix) const { return m_file.has(key(suffix)); }

  // The key's unsigned value; an Error when it is missing, not an unsigned integer or more
  // than uint32 allows.
  Expected<std::uint32_t> u32(std::string_view suffix) const;
  // As u32, or `fallback` when the key is absent.
  Expected<std::uint32_t> u32_or(std::string_view suffix, std::uint32_t fallback) const;

  // llama_model_loader::get_key_or_arr: a scalar for every one of `n` layers or one value per
  // layer; an Error when missing, of another type or length, or beyond uint32.
  Expected<std::vector<std::uint32_t>> per_layer(std::string_view suffix, std::size_t n) const;
  // As per_layer, or `fallback` when the key is absent.
  Expected<std::vector<std::uint32_t>> per_layer_or(std::string_view suffix, std::size_t n,
                                                    std::vector<std::uint32_t> fallback) const;

  // True when the key holds an array (llama.cpp's scalar-only get_key_or_arr then ignores it).
  bool is_array(std::string_view suffix) const;

  // "<file>: [offset N: ]key '<arch>.<suffix>' <problem>".
  Error error(std::string_view suffix, std::string_view problem) const;

 private:
  Expected<std::uint32_t> fit(const std::string& name, std::uint64_t value) const;

  const gguf::GgufFile& m_file;
  std::string_view m_arch;
};

// <arch>.nextn_predict_layers (0 when absent); an Error unless it is less than `block_count`,
// as llama.cpp asserts.
Expected<std::uint32_t> read_nextn_count(const Hparams& hp, std::uint32_t block_count);

}  // namespace gb10tune::model::detail

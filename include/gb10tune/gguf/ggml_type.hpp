// The ggml tensor types a GGUF file can name: numeric ids, names and block sizes exactly as
// llama.cpp defines them (ggml/include/ggml.h `enum ggml_type`, ggml/src/ggml.c `type_traits`,
// block structs in ggml/src/ggml-common.h; llama.cpp of 2026-08, commit 3f545be). The KV cache
// types (`--cache-type-k q8_0`) use the same table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gb10tune::gguf {

// ggml's type ids as stored in GGUF tensor infos. Ids 4, 5, 31–33 and 36–38 were removed from
// ggml and are not listed.
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

// One row of ggml's type table.
struct GgmlTypeInfo {
  GgmlType type = GgmlType::f32;
  std::string_view name;          // llama.cpp's spelling: "f16", "q8_0", "q4_K", "bf16", …
  std::uint32_t block_size = 1;   // elements per block (ggml_blck_size)
  std::uint32_t block_bytes = 0;  // bytes per block (ggml_type_size)
  bool quantized = false;
};

// Every known type, in id order.
std::span<const GgmlTypeInfo> ggml_types();

// The entry for an id as stored in a GGUF file; nullptr for an unknown or removed id.
const GgmlTypeInfo* ggml_type_from_id(std::uint32_t id);

// The entry for a name, ignoring case ("Q8_0", "q4_k", "BF16"); nullptr when unknown.
const GgmlTypeInfo* ggml_type_from_name(std::string_view name);

// The entry of a listed type (never fails).
const GgmlTypeInfo& ggml_type_info(GgmlType type);

// The old name of an id that ggml removed ("Q4_0_4_4", …), for error messages; empty for any
// other id.
std::string_view removed_ggml_type_name(std::uint32_t id);

// Bytes that `elements` values of `type` occupy (ggml_row_size). nullopt when `elements` is
// not a whole number of blocks or the size overflows 64 bits.
std::optional<std::uint64_t> ggml_bytes(GgmlType type, std::uint64_t elements);

}  // namespace gb10tune::gguf

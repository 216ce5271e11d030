#include "gb10tune/gguf/ggml_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace gb10tune::gguf {

namespace {

// Block sizes: QK_K = 256, QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0 = QK8_1 = QK4_NL = QK_MXFP4 = 32,
// QK_NVFP4 = 64, QK1_0 = 128, QK2_0 = 64. Block bytes are sizeof(block_*) of ggml-common.h.
constexpr std::array kTypes{
    GgmlTypeInfo{GgmlType::f32, "f32", 1, 4, false},
    GgmlTypeInfo{GgmlType::f16, "f16", 1, 2, false},
    GgmlTypeInfo{GgmlType::q4_0, "q4_0", 32, 18, true},
    GgmlTypeInfo{GgmlType::q4_1, "q4_1", 32, 20, true},
    GgmlTypeInfo{GgmlType::q5_0, "q5_0", 32, 22, true},
    GgmlTypeInfo{GgmlType::q5_1, "q5_1", 32, 24, true},
    GgmlTypeInfo{GgmlType::q8_0, "q8_0", 32, 34, true},
    GgmlTypeInfo{GgmlType::q8_1, "q8_1", 32, 36, true},
    GgmlTypeInfo{GgmlType::q2_k, "q2_K", 256, 84, true},
    GgmlTypeInfo{GgmlType::q3_k, "q3_K", 256, 110, true},
    GgmlTypeInfo{GgmlType::q4_k, "q4_K", 256, 144, true},
    GgmlTypeInfo{GgmlType::q5_k, "q5_K", 256, 176, true},
    GgmlTypeInfo{GgmlType::q6_k, "q6_K", 256, 210, true},
    GgmlTypeInfo{GgmlType::q8_k, "q8_K", 256, 292, true},
    GgmlTypeInfo{GgmlType::iq2_xxs, "iq2_xxs", 256, 66, true},
    GgmlTypeInfo{GgmlType::iq2_xs, "iq2_xs", 256, 74, true},
    GgmlTypeInfo{GgmlType::iq3_xxs, "iq3_xxs", 256, 98, true},
    GgmlTypeInfo{GgmlType::iq1_s, "iq1_s", 256, 50, true},
    GgmlTypeInfo{GgmlType::iq4_nl, "iq4_nl", 32, 18, true},
    GgmlTypeInfo{GgmlType::iq3_s, "iq3_s", 256, 110, true},
    GgmlTypeInfo{GgmlType::iq2_s, "iq2_s", 256, 82, true},
    GgmlTypeInfo{GgmlType::iq4_xs, "iq4_xs", 256, 136, true},
    GgmlTypeInfo{GgmlType::i8, "i8", 1, 1, false},
    GgmlTypeInfo{GgmlType::i16, "i16", 1, 2, false},
    GgmlTypeInfo{GgmlType::i32, "i32", 1, 4, false},
    GgmlTypeInfo{GgmlType::i64, "i64", 1, 8, false},
    GgmlTypeInfo{GgmlType::f64, "f64", 1, 8, false},
    GgmlTypeInfo{GgmlType::iq1_m, "iq1_m", 256, 56, true},
    GgmlTypeInfo{GgmlType::bf16, "bf16", 1, 2, false},
    GgmlTypeInfo{GgmlType::tq1_0, "tq1_0", 256, 54, true},
    GgmlTypeInfo{GgmlType::tq2_0, "tq2_0", 256, 66, true},
    GgmlTypeInfo{GgmlType::mxfp4, "mxfp4", 32, 17, true},
    GgmlTypeInfo{GgmlType::nvfp4, "nvfp4", 64, 36, true},
    GgmlTypeInfo{GgmlType::q1_0, "q1_0", 128, 18, true},
    GgmlTypeInfo{GgmlType::q2_0, "q2_0", 64, 18, true},
};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const GgmlTypeInfo> ggml_types() {
  return kTypes;
}

const GgmlTypeInfo* ggml_type_from_id(std::uint32_t id) {
  for (const GgmlTypeInfo& info : kTypes) {
    if (static_cast<std::uint32_t>(info.type) == id) {
      return &info;
    }
  }
  return nullptr;
}

const GgmlTypeInfo* ggml_type_from_name(std::string_view name) {
  for (const GgmlTypeInfo& info : kTypes) {
    if (equal_ignoring_case(info.name, name)) {
      return &info;
    }
  }
  return nullptr;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  const GgmlTypeInfo* info = ggml_type_from_id(static_cast<std::uint32_t>(type));
  return info != nullptr ? *info : kTypes.front();
}

std::string_view removed_ggml_type_name(std::uint32_t id) {
  switch (id) {
    case 4:
      return "Q4_2";
    case 5:
      return "Q4_3";
    case 31:
      return "Q4_0_4_4";
    case 32:
      return "Q4_0_4_8";
    case 33:
      return "Q4_0_8_8";
    case 36:
      return "IQ4_NL_4_4";
    case 37:
      return "IQ4_NL_4_8";
    case 38:
      return "IQ4_NL_8_8";
    default:
      return {};
  }
}

std::optional<std::uint64_t> ggml_bytes(GgmlType type, std::uint64_t elements) {
  const GgmlTypeInfo& info = ggml_type_info(type);
  if (elements % info.block_size != 0) {
    return std::nullopt;
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements / info.block_size, info.block_bytes, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace gb10tune::gguf

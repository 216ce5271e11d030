// The GGUF parser's tensor table (names, shapes, types, offsets) and the data section after it:
// every tensor in order, aligned, inside the file.
#include <fmt/format.h>

#include <limits>
#include <utility>

#include "gguf_parser.hpp"

namespace gb10tune::gguf {

using namespace parsing;

Status GgufParser::parse_tensor_infos() {
  for (std::uint64_t i = 0; i < m_tensor_count; ++i) {
    TensorInfo info;
    info.info_offset = m_source.position();
    auto name = read_string({"the name of tensor", {}, i});
    if (!name) {
      return name.error();
    }
    if (name->size() > kMaxTensorNameLength) {
      return fail(info.info_offset,
                  fmt::format("tensor {} has a {}-byte name, longer than the {} bytes "
                              "llama.cpp accepts",
                              i, name->size(), kMaxTensorNameLength));
    }
    if (const auto it = m_file.m_tensor_index.find(*name); it != m_file.m_tensor_index.end()) {
      return fail(info.info_offset,
                  fmt::format("duplicate tensor name '{}' (first at offset {}); llama.cpp "
                              "refuses such files, so the file is corrupt",
                              *name, m_file.m_tensors[it->second].info_offset));
    }
    info.name = std::move(*name);

    const std::uint64_t dims_at = m_source.position();
    const auto n_dims = read_number<std::uint32_t>({"the rank of", info.name});
    if (!n_dims) {
      return n_dims.error();
    }
    if (*n_dims > 4) {
      return fail(dims_at, fmt::format("tensor '{}' has {} dimensions; ggml supports at most 4",
                                       info.name, *n_dims));
    }
    info.n_dims = *n_dims;
    std::uint64_t elements = 1;
    bool overflow = false;
    for (std::uint32_t d = 0; d < info.n_dims; ++d) {
      const std::uint64_t dim_at = m_source.position();
      const auto dim = read_number<std::uint64_t>({"the shape of", info.name});
      if (!dim) {
        return dim.error();
      }
      if (*dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return fail(dim_at, fmt::format("tensor '{}' dimension {} is {}, negative as ggml's "
                                        "int64; {}",
                                        info.name, d, *dim, kTruncatedFix));
      }
      info.shape[d] = *dim;
      overflow = overflow || __builtin_mul_overflow(elements, *dim, &elements);
    }
    if (overflow ||
        elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return fail(dims_at,
                  fmt::format("tensor '{}' has shape [{}, {}, {}, {}], whose element count "
                              "overflows int64; {}",
                              info.name, info.shape[0], info.shape[1], info.shape[2], info.shape[3],
                              kTruncatedFix));
    }
    info.elements = elements;

    const std::uint64_t type_at = m_source.position();
    const auto type_id = read_number<std::uint32_t>({"the type of", info.name});
    if (!type_id) {
      return type_id.error();
    }
    const GgmlTypeInfo* type = ggml_type_from_id(*type_id);
    if (type == nullptr) {
      const std::string_view removed = removed_ggml_type_name(*type_id);
      if (!removed.empty()) {
        return fail(type_at, fmt::format("tensor '{}' uses ggml type {} ({}), which ggml "
                                         "removed; quantize the model again with a current "
                                         "llama.cpp",
                                         info.name, *type_id, removed));
      }
      return fail(type_at, fmt::format("tensor '{}' has unknown ggml type {}; the file is "
                                       "corrupt or needs a newer gb10tune",
                                       info.name, *type_id));
    }
    info.type = type->type;
    if (info.shape[0] % type->block_size != 0) {
      return fail(type_at, fmt::format("tensor '{}' of type {} has rows of {} elements, not a "
                                       "multiple of the block size {}; {}",
                                       info.name, type->name, info.shape[0], type->block_size,
                                       kTruncatedFix));
    }
    const auto bytes = ggml_bytes(info.type, info.elements);
    if (!bytes) {
      return fail(type_at, fmt::format("tensor '{}' of type {} has a size in bytes that "
                                       "overflows 64 bits; {}",
                                       info.name, type->name, kTruncatedFix));
    }
    info.bytes = *bytes;

    const auto offset = read_number<std::uint64_t>({"the offset of", info.name});
    if (!offset) {
      return offset.error();
    }
    info.offset = *offset;
    if (Status s = charge(string_heap_bytes(info.name.size()), {"the name of", info.name},
                          info.info_offset);
        !s) {
      return s.error();  // the index holds a copy of the name
    }
    m_file.m_tensor_index.emplace(info.name, m_file.m_tensors.size());
    m_file.m_tensors.push_back(std::move(info));
  }
  return {};
}

Status GgufParser::check_data_section() {
  const std::uint64_t alignment = m_file.m_alignment;
  std::uint64_t data_offset = m_source.position();
  if (!m_file.m_tensors.empty()) {
    data_offset = align_up(data_offset, alignment);
    if (data_offset > m_source.size() && !data_absent(data_offset)) {
      return fail(m_source.position(),
                  fmt::format("the data section should start at offset {}, past the end of "
                              "the file (size {}); {}",
                              data_offset, m_source.size(), kTruncatedFix));
    }
  }
  m_file.m_data_offset = data_offset;

  std::uint64_t expected = 0;
  for (const TensorInfo& info : m_file.m_tensors) {
    if (info.offset % alignment != 0) {
      return fail(info.info_offset,
                  fmt::format("tensor '{}' has data offset {}, not a multiple of the "
                              "alignment {}; {}",
                              info.name, info.offset, alignment, kTruncatedFix));
    }
    if (info.offset != expected) {
      return fail(info.info_offset,
                  fmt::format("tensor '{}' has data offset {} but {} was expected: llama.cpp "
                              "requires tensors stored in order, each padded to {} bytes; {}",
                              info.name, info.offset, expected, alignment, kTruncatedFix));
    }
    std::uint64_t end = 0;
    if (__builtin_add_overflow(data_offset, info.offset, &end) ||
        __builtin_add_overflow(end, info.bytes, &end) ||
        (end > m_source.size() && !data_absent(end))) {
      return fail(info.info_offset,
                  fmt::format("tensor '{}' ({} bytes at data offset {}) runs past the end of "
                              "the file (size {}): the file is truncated; download it again",
                              info.name, info.bytes, info.offset, m_source.size()));
    }
    std::uint64_t padded = align_up(info.bytes, alignment);
    if (padded < info.bytes || __builtin_add_overflow(expected, padded, &expected)) {
      return fail(info.info_offset, fmt::format("tensor '{}' size overflows the data section; {}",
                                                info.name, kTruncatedFix));
    }
  }
  m_file.m_data_size = expected;
  if (m_file.m_header_only) {
    m_file.m_file_size = data_offset + expected;
  }
  return {};
}

bool GgufParser::data_absent(std::uint64_t end) {
  if (m_completeness != Completeness::header_only || end <= m_source.size()) {
    return false;
  }
  m_file.m_header_only = true;
  return true;
}

}  // namespace gb10tune::gguf

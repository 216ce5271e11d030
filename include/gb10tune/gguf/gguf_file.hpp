// The header of a GGUF file (v2 and v3): metadata and tensor infos. The reader never touches
// tensor data, so the header of a 17 GB model reads in milliseconds. Hostile input is normal
// input: every malformed field is an Error naming the file and the byte offset, never a crash,
// an allocation larger than the bytes the file really holds, or a parsed header holding more
// than kMaxHeaderMemory.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/gguf/gguf_value.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::gguf {

// "GGUF" read as a little-endian uint32.
inline constexpr std::uint32_t kGgufMagic = 0x46554747;
// general.alignment when the file does not set it.
inline constexpr std::uint32_t kDefaultAlignment = 32;
// Longest tensor name llama.cpp accepts (GGML_MAX_NAME - 1).
inline constexpr std::size_t kMaxTensorNameLength = 63;
// Headers (everything before the data section) larger than this are refused: real models
// need a few MiB (the tokenizer), and the cap bounds what a hostile file can make us allocate.
inline constexpr std::uint64_t kMaxHeaderBytes = 256ull << 20;
// The memory a parsed header may hold, by the parser's own accounting (every value's storage,
// strings' heap buffers, the key and tensor indexes, allocator overhead), refused past this:
// 12 bytes of file (an empty nested array) become ~100 bytes in memory, so the byte cap alone
// does not bound it. Real headers hold a few tens of MiB (docs/gguf-reader.md).
inline constexpr std::uint64_t kMaxHeaderMemory = 256ull << 20;
// Arrays of arrays nested deeper than this are refused.
inline constexpr int kMaxArrayDepth = 8;

// One metadata key-value pair.
struct MetadataEntry {
  std::string key;
  Value value;
  std::uint64_t offset = 0;  // where the entry starts in the file
};

// One tensor info record (the data itself is never read).
struct TensorInfo {
  std::string name;
  std::uint32_t n_dims = 0;
  std::array<std::uint64_t, 4> shape{1, 1, 1, 1};  // ne[0..3]; dimensions past n_dims are 1
  GgmlType type = GgmlType::f32;
  std::uint64_t offset = 0;       // data offset relative to the start of the data section
  std::uint64_t elements = 0;     // product of the shape
  std::uint64_t bytes = 0;        // size of the data (ggml_nbytes), without alignment padding
  std::uint64_t info_offset = 0;  // where this record starts in the file
};

// A parsed GGUF header. Lookups by key or tensor name are O(1).
class GgufFile {
 public:
  // The path or name that stands for the file in messages.
  const std::string& source() const { return m_source; }
  std::uint32_t version() const { return m_version; }
  std::uint64_t file_size() const { return m_file_size; }
  std::uint32_t alignment() const { return m_alignment; }
  // Absolute offset of the data section (the end of the header, aligned when there are
  // tensors).
  std::uint64_t data_offset() const { return m_data_offset; }
  // Size of the data section: every tensor's size padded to the alignment.
  std::uint64_t data_size() const { return m_data_size; }
  // The memory the parser charged for this header against kMaxHeaderMemory.
  std::uint64_t memory_bytes() const { return m_memory_bytes; }
  // True when the file read held the header but not all of the tensor data (a header-only
  // copy, read with Completeness::header_only); file_size() is then the size the whole file
  // has: data_offset() + data_size().
  bool header_only() const { return m_header_only; }

  const std::vector<MetadataEntry>& metadata() const { return m_metadata; }
  const std::vector<TensorInfo>& tensors() const { return m_tensors; }

  // The entry for `key`, or nullptr.
  const MetadataEntry* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The tensor called `name`, or nullptr.
  const TensorInfo* find_tensor(std::string_view name) const;

  // Typed accessors. Each fails with an Error naming the file and the key when the key is
  // missing or holds another type ("… is a string, expected an unsigned integer").
  // get_uint accepts any integer type holding a value >= 0; get_int any integer that fits
  // int64; get_float float32 or float64.
  Expected<std::uint64_t> get_uint(std::string_view key) const;
  Expected<std::int64_t> get_int(std::string_view key) const;
  Expected<double> get_float(std::string_view key) const;
  Expected<std::string> get_string(std::string_view key) const;
  Expected<bool> get_bool(std::string_view key) const;
  // The array stored under `key` (never nullptr on success; valid while this file lives).
  Expected<const Array*> get_array(std::string_view key) const;

  // get_uint, but `fallback` when the key is missing (a wrong type is still an Error).
  Expected<std::uint64_t> get_uint_or(std::string_view key, std::uint64_t fallback) const;
  // get_string, but `fallback` when the key is missing.
  Expected<std::string> get_string_or(std::string_view key, std::string fallback) const;

  // A per-layer value: an integer (or bool) scalar repeated `n` times, or an array of
  // exactly `n` integers or bools (what llama.cpp's get_key_or_arr accepts). An Error when
  // missing, when the array has another length, or when an element is negative.
  Expected<std::vector<std::uint64_t>> get_uint_per_layer(std::string_view key,
                                                          std::size_t n) const;

  // Sum of every tensor's `bytes` and `elements`.
  std::uint64_t tensor_bytes() const;
  std::uint64_t tensor_elements() const;

 private:
  friend class GgufParser;

  Error key_error(std::string_view key, std::string_view problem) const;
  Expected<const Value*> require(std::string_view key) const;

  std::string m_source;
  std::uint32_t m_version = 0;
  std::uint64_t m_file_size = 0;
  std::uint32_t m_alignment = kDefaultAlignment;
  std::uint64_t m_data_offset = 0;
  std::uint64_t m_data_size = 0;
  std::uint64_t m_memory_bytes = 0;
  bool m_header_only = false;
  std::vector<MetadataEntry> m_metadata;
  std::vector<TensorInfo> m_tensors;
  std::unordered_map<std::string, std::size_t> m_key_index;
  std::unordered_map<std::string, std::size_t> m_tensor_index;
};

// What a read requires of the file: all of it (a model a server will load), or the header
// alone (planning before a download: metadata and tensor infos, the tensor data absent).
enum class Completeness { whole_file, header_only };

// Where the bytes of a file that is not a local one come from (a remote file read with range
// requests). The reader asks for the header's bytes only, in order, within kMaxHeaderBytes.
class HeaderSource {
 public:
  virtual ~HeaderSource() = default;
  // The whole file's size in bytes.
  virtual std::uint64_t size() const = 0;
  // Copies up to `count` bytes at `offset` (< size()) to `out`; the number copied (> 0; fewer
  // than `count` when only those are at hand, and the reader asks again past them). An Error
  // with the reason (without the file's name) when they cannot be had.
  virtual Expected<std::size_t> read_at(std::uint64_t offset, void* out, std::size_t count) = 0;
};

// Reads the header of the GGUF file at `path` through a buffered reader (1 MiB reads, never
// the tensor data). An Error names the file, the byte offset and the problem; with
// `whole_file` a file too short for its tensor data is one (truncated), with `header_only` a
// file that ends after its tensor infos is read as a header-only copy (header_only() true).
Expected<GgufFile> read_gguf(const std::filesystem::path& path,
                             Completeness completeness = Completeness::whole_file);

// Reads the header of the file `source` stands for (never its tensor data; the file's size
// is source.size()); `name` stands for it in messages. The Errors of read_gguf, and the
// source's own, prefixed with the name and offset.
Expected<GgufFile> read_gguf(HeaderSource& source, std::string_view name);

// Parses a GGUF file held in memory (the fuzz target's entry point); `name` stands for it in
// messages. Tensor data past the header must be present for the bounds checks to pass.
Expected<GgufFile> parse_gguf(std::span<const std::uint8_t> bytes, std::string_view name);

}  // namespace gb10tune::gguf

// A small GGUF writer for tests: metadata of every type (nested arrays included), tensor infos
// with shapes and types, alignment, a data section that is zeros in memory or a sparse hole on
// disk (ftruncate, so a 17 GB model costs no disk), and knobs for writing broken files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/gguf/gguf_value.hpp"

namespace gb10tune::testing {

// One encoded metadata value: its type id and the bytes that follow the type in the file.
struct GgufValueBytes {
  std::uint32_t type = 0;
  std::string payload;
};

GgufValueBytes gguf_uint8(std::uint8_t value);
GgufValueBytes gguf_int8(std::int8_t value);
GgufValueBytes gguf_uint16(std::uint16_t value);
GgufValueBytes gguf_int16(std::int16_t value);
GgufValueBytes gguf_uint32(std::uint32_t value);
GgufValueBytes gguf_int32(std::int32_t value);
GgufValueBytes gguf_uint64(std::uint64_t value);
GgufValueBytes gguf_int64(std::int64_t value);
GgufValueBytes gguf_float32(float value);
GgufValueBytes gguf_float64(double value);
GgufValueBytes gguf_bool(bool value);
GgufValueBytes gguf_string(std::string_view value);
// An array of `items`, each of type `element` (their own type ids are not written).
GgufValueBytes gguf_array(gguf::ValueType element, const std::vector<GgufValueBytes>& items);
GgufValueBytes gguf_uint32_array(const std::vector<std::uint32_t>& values);
GgufValueBytes gguf_int32_array(const std::vector<std::int32_t>& values);
GgufValueBytes gguf_bool_array(const std::vector<bool>& values);
GgufValueBytes gguf_string_array(const std::vector<std::string>& values);
// Anything, for hostile files: a type id (valid or not) and raw bytes.
GgufValueBytes gguf_raw(std::uint32_t type, std::string payload);

// Little-endian encodings, for building or patching bytes by hand.
std::string le32(std::uint32_t value);
std::string le64(std::uint64_t value);

// Where things landed in the header the writer produced.
struct GgufLayout {
  std::string header;                                   // magic .. padding before the data section
  std::map<std::string, std::uint64_t> key_offsets;     // start of each metadata entry
  std::map<std::string, std::uint64_t> tensor_offsets;  // start of each tensor info
  std::uint64_t data_offset = 0;                        // where the data section starts
  std::uint64_t data_size = 0;                          // padded tensor sizes summed
  std::uint64_t file_size() const { return data_offset + data_size; }
};

class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t version = 3) : m_version(version) {}

  // Adds a metadata entry (no check for duplicates: tests write those on purpose).
  GgufWriter& add(std::string_view key, GgufValueBytes value);
  // Adds general.alignment (uint32) and lays tensors out with it.
  GgufWriter& alignment(std::uint32_t alignment);
  // Adds a tensor info; its offset follows the previous tensor (padded to the alignment)
  // unless `offset` is given. `type` is a ggml type id (unknown ids are written as is).
  GgufWriter& tensor(std::string name, std::vector<std::uint64_t> shape, std::uint32_t type,
                     std::optional<std::uint64_t> offset = std::nullopt);
  GgufWriter& tensor(std::string name, std::vector<std::uint64_t> shape, gguf::GgmlType type,
                     std::optional<std::uint64_t> offset = std::nullopt);

  // Knobs for broken files.
  GgufWriter& magic(std::string four_bytes);
  GgufWriter& tensor_count(std::uint64_t count);  // written instead of the real count
  GgufWriter& metadata_count(std::uint64_t count);

  // The header bytes and where each part landed.
  GgufLayout layout() const;
  // The whole file in memory: header plus a zero-filled data section (small models only).
  std::string bytes() const;
  // Writes the file to `path`: the header, then the data section as a sparse hole
  // (ftruncate), so even a 17 GB model takes no disk space. Returns the file size.
  std::uint64_t write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> shape;
    std::uint32_t type = 0;
    std::optional<std::uint64_t> offset;
  };

  std::uint32_t m_version;
  std::uint32_t m_alignment = 32;
  std::string m_magic = "GGUF";
  std::optional<std::uint64_t> m_tensor_count;
  std::optional<std::uint64_t> m_metadata_count;
  std::vector<std::pair<std::string, GgufValueBytes>> m_metadata;
  std::vector<Tensor> m_tensors;
};

// Bytes of a tensor of `type` id with `shape` (0 for unknown ids or partial blocks).
std::uint64_t gguf_tensor_bytes(std::uint32_t type, const std::vector<std::uint64_t>& shape);

// Writes `bytes` to `path`, replacing it.
void write_bytes(const std::filesystem::path& path, const std::string& bytes);

// Overwrites 8 (or 4) bytes at `offset` of `bytes` with a little-endian value.
void patch_u64(std::string& bytes, std::uint64_t offset, std::uint64_t value);
void patch_u32(std::string& bytes, std::uint64_t offset, std::uint32_t value);

}  // namespace gb10tune::testing

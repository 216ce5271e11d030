// libFuzzer target: arbitrary bytes parsed as a GGUF file from memory, then everything a
// caller may do with the result (typed accessors, per-layer arrays, model facts, KV sizes).
// Any crash, sanitizer report, hang or huge allocation is a bug; so is an error message that
// does not name the file.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"

namespace {

constexpr std::string_view kName = "fuzz.gguf";

void require_named(const gb10tune::Error& error) {
  if (error.message.rfind(kName, 0) != 0) {
    std::abort();  // every message must start with the file name
  }
}

void walk(const gb10tune::gguf::Array& array, int depth) {
  const std::uint64_t n = array.size() < 16 ? array.size() : 16;
  for (std::uint64_t i = 0; i < n; ++i) {
    (void)array.uint_at(i);
    (void)array.int_at(i);
    (void)array.float_at(i);
    (void)array.bool_at(i);
    (void)array.string_at(i);
    if (const auto* inner = array.array_at(i); inner != nullptr && depth < 16) {
      walk(*inner, depth + 1);
    }
  }
  (void)array.uint_at(array.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gb10tune;
  const auto file = gguf::parse_gguf({data, size}, kName);
  if (!file) {
    require_named(file.error());
    return 0;
  }
  if (file->memory_bytes() > gguf::kMaxHeaderMemory) {
    std::abort();  // a parsed header stays within its memory budget
  }
  for (const gguf::MetadataEntry& entry : file->metadata()) {
    (void)entry.value.summary();
    (void)file->get_uint(entry.key);
    (void)file->get_int(entry.key);
    (void)file->get_float(entry.key);
    (void)file->get_bool(entry.key);
    (void)file->get_string(entry.key);
    if (const auto array = file->get_array(entry.key)) {
      walk(**array, 0);
    }
    const auto per_layer = file->get_uint_per_layer(entry.key, 4);
    if (!per_layer) {
      require_named(per_layer.error());
    }
  }
  (void)file->tensor_bytes();
  (void)file->tensor_elements();

  const auto facts = model::describe_model(*file);
  if (!facts) {
    require_named(facts.error());
  } else {
    using gguf::GgmlType;
    for (const auto scope :
         {model::KvScope::full_attention, model::KvScope::sliding_window, model::KvScope::mtp}) {
      (void)facts->kv_layer_count(scope);
      for (const GgmlType type : {GgmlType::f16, GgmlType::q8_0, GgmlType::q4_0}) {
        const auto bytes = facts->kv_bytes_per_cell(scope, type, type, size % 2 == 0);
        if (!bytes) {
          require_named(bytes.error());
        }
      }
    }
  }
  const auto projector = model::describe_projector(*file);
  if (!projector) {
    require_named(projector.error());
  }
  return 0;
}

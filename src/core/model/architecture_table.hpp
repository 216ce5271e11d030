// The architectures gb10tune has layer rules for (one row each: family, rollback, the llama.cpp
// source it follows) and those it refuses with a reason (private to the model module).
#pragma once

#include <cstdint>
#include <string_view>

namespace gb10tune::model::detail {

// How an architecture's caches are laid out; everything else about its layers (per-layer
// head counts, key/value lengths, nextn blocks) comes from the GGUF's own keys. Each family
// has one rule (layer_families.hpp).
enum class Family {
  dense,           // every block keeps K and V; widths from head_count_kv × key/value_length
  swa,             // sliding-window layers by a period (SwaSpec), the rest as dense
  llama4,          // chunked attention: 8192-token chunks on 3 of every 4 layers
  mla,             // multi-head latent attention: K holds kv_lora_rank + n_rot, no V
  qwen_hybrid,     // gated delta net layers with recurrent state, full attention every Nth
  gemma3n,         // SWA period 5; only the first 20 layers keep KV, later ones reuse it
  gemma4,          // per-layer SWA flags; the last shared_kv_layers layers reuse earlier KV
  nemotron_h,      // Mamba-2 layers, attention layers and MLP-only layers (no cache)
  granite_hybrid,  // Mamba-2 layers where head_count_kv is 0, attention elsewhere
};

// When an architecture's sliding window applies (its load_arch_hparams).
enum class SwaKey {
  none,              // no sliding window
  required,          // attention.sliding_window must be present; always SWA
  present_positive,  // SWA only when attention.sliding_window is present and > 0
  default_window,    // always SWA; the window is the key's value or SwaSpec::window
};

// A sliding-window pattern: set_swa_pattern(period) with the period from a scalar
// attention.sliding_window_pattern (llama.cpp ignores an array there), else `period`.
struct SwaSpec {
  SwaKey key = SwaKey::none;
  std::uint32_t period = 0;
  std::uint32_t window = 0;  // default_window only
};

// One supported architecture: the exceptions table. `source` is the llama.cpp file whose
// load_arch_hparams (and llama_model::create_memory, src/llama-model.cpp) the rule follows.
struct ArchRule {
  std::string_view name;
  Family family;
  bool rollback;  // llm_arch_supports_rs_rollback (src/llama-arch.cpp)
  std::string_view source;
  SwaSpec swa;
};

// The row of `architecture`, or nullptr when gb10tune has no rules for it.
const ArchRule* find_rule(std::string_view architecture);

// The architectures that have rules, comma-separated, for messages.
std::string_view supported_architectures();

// The supported architecture whose name is closest to `architecture` (longest common
// prefix, then edit distance), for the message that refuses an unknown one.
std::string_view nearest_supported_architecture(std::string_view architecture);

// True when gb10tune has layer rules for `architecture`.
bool is_supported_architecture(std::string_view architecture);

// Why launch does not plan `architecture`, an architecture llama.cpp (3f545be) implements
// but gb10tune has no layer rules for; empty when llama.cpp does not know it either.
std::string_view refusal_reason(std::string_view architecture);

}  // namespace gb10tune::model::detail

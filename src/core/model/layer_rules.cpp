// Layer rules, each from the llama.cpp function named beside it (llama.cpp 2026-08, 3f545be).
#include "layer_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

namespace gb10tune::model::detail {

namespace {

// How an architecture's caches are laid out; everything else about its layers (per-layer
// head counts, key/value lengths, nextn blocks) comes from the GGUF's own keys.
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

constexpr SwaSpec kNoSwa{};

// A plain-attention architecture (Family::dense) that follows `source`.
constexpr ArchRule plain(std::string_view name, std::string_view source) {
  return ArchRule{name, Family::dense, false, source, kNoSwa};
}

constexpr std::array kArchitectures{
    ArchRule{"llama", Family::dense, false, "src/models/llama.cpp", kNoSwa},
    ArchRule{"qwen2", Family::dense, false, "src/models/qwen2.cpp", kNoSwa},
    ArchRule{"qwen3", Family::dense, false, "src/models/qwen3.cpp", kNoSwa},
    ArchRule{"qwen3moe", Family::dense, false, "src/models/qwen3moe.cpp", kNoSwa},
    ArchRule{"qwen35", Family::qwen_hybrid, true, "src/models/qwen35.cpp", kNoSwa},
    ArchRule{"qwen35moe", Family::qwen_hybrid, true, "src/models/qwen35moe.cpp", kNoSwa},
    ArchRule{"qwen3next", Family::qwen_hybrid, false, "src/models/qwen3next.cpp", kNoSwa},
    ArchRule{"gemma3", Family::swa, false, "src/models/gemma3.cpp",
             SwaSpec{SwaKey::present_positive, 6, 0}},
    ArchRule{"gpt-oss", Family::swa, false, "src/models/openai-moe.cpp",
             SwaSpec{SwaKey::required, 2, 0}},
    // Plain attention: no filter, reuse or SWA in create_memory, so every block (nextn
    // blocks of glm4moe included) keeps a cache of n_embd_k_gqa(il) + n_embd_v_gqa(il).
    ArchRule{"glm4moe", Family::dense, false, "src/models/glm4-moe.cpp", kNoSwa},
    ArchRule{"mistral3", Family::dense, false, "src/models/mistral3.cpp", kNoSwa},
    ArchRule{"seed_oss", Family::dense, false, "src/models/seed-oss.cpp", kNoSwa},
    ArchRule{"qwen3vl", Family::dense, false, "src/models/qwen3vl.cpp", kNoSwa},
    ArchRule{"qwen3vlmoe", Family::dense, false, "src/models/qwen3vlmoe.cpp", kNoSwa},
    ArchRule{"minimax-m2", Family::dense, false, "src/models/minimax-m2.cpp", kNoSwa},
    ArchRule{"llama4", Family::llama4, false, "src/models/llama4.cpp", kNoSwa},
    ArchRule{"deepseek2", Family::mla, false, "src/models/deepseek2.cpp", kNoSwa},
    // Mistral 4 is deepseek2's loader (llama_model_mistral4 derives from it, src/models/models.h).
    ArchRule{"mistral4", Family::mla, false, "src/models/deepseek2.cpp", kNoSwa},
    // Shared-KV layers: llama_hparams::has_kv (n_layer_kv_from_start) and create_memory's
    // reuse callback for LLM_ARCH_GEMMA3N / LLM_ARCH_GEMMA4.
    ArchRule{"gemma3n", Family::gemma3n, false, "src/models/gemma3n.cpp",
             SwaSpec{SwaKey::required, 5, 0}},
    ArchRule{"gemma4", Family::gemma4, false, "src/models/gemma4.cpp", kNoSwa},
    // Hybrid Mamba-2: llama_memory_hybrid with the layer filters of create_memory.
    ArchRule{"nemotron_h", Family::nemotron_h, true, "src/models/nemotron-h.cpp", kNoSwa},
    // nemotron_h_moe reuses nemotron_h's load_arch_hparams (src/models/models.h).
    ArchRule{"nemotron_h_moe", Family::nemotron_h, true, "src/models/nemotron-h.cpp", kNoSwa},
    ArchRule{"granitehybrid", Family::granite_hybrid, false, "src/models/granite-hybrid.cpp",
             kNoSwa},
    // Sliding-window architectures of the sweep: set_swa_pattern with their own defaults.
    ArchRule{"gemma2", Family::swa, false, "src/models/gemma2.cpp",
             SwaSpec{SwaKey::default_window, 2, 4096}},
    ArchRule{"cohere2", Family::swa, false, "src/models/cohere2.cpp",
             SwaSpec{SwaKey::required, 4, 0}},
    ArchRule{"olmo2", Family::swa, false, "src/models/olmo2.cpp",
             SwaSpec{SwaKey::present_positive, 4, 0}},
    ArchRule{"afmoe", Family::swa, false, "src/models/afmoe.cpp",
             SwaSpec{SwaKey::present_positive, 4, 0}},
    ArchRule{"plamo3", Family::swa, false, "src/models/plamo3.cpp",
             SwaSpec{SwaKey::present_positive, 8, 0}},
    // The sweep's plain-attention architectures: their load_arch_hparams touches none of
    // the head counts, head sizes, SWA, recurrent or KV-sharing fields, and create_memory
    // gives them the default llama_kv_cache over every block.
    plain("apertus", "src/models/apertus.cpp"),
    plain("arcee", "src/models/arcee.cpp"),
    plain("arctic", "src/models/arctic.cpp"),
    plain("baichuan", "src/models/baichuan.cpp"),
    plain("bailingmoe", "src/models/bailingmoe.cpp"),
    plain("bailingmoe2", "src/models/bailingmoe2.cpp"),
    plain("bitnet", "src/models/bitnet.cpp"),
    plain("bloom", "src/models/bloom.cpp"),
    plain("chameleon", "src/models/chameleon.cpp"),
    plain("chatglm", "src/models/chatglm.cpp"),
    plain("codeshell", "src/models/codeshell.cpp"),
    plain("cogvlm", "src/models/cogvlm.cpp"),
    plain("command-r", "src/models/command-r.cpp"),
    plain("dbrx", "src/models/dbrx.cpp"),
    plain("deci", "src/models/deci.cpp"),
    plain("deepseek", "src/models/deepseek.cpp"),
    plain("deepseek2-ocr", "src/models/deepseek2ocr.cpp"),
    plain("ernie4_5", "src/models/ernie4-5.cpp"),
    plain("ernie4_5-moe", "src/models/ernie4-5.cpp"),
    plain("dots1", "src/models/dots1.cpp"),
    plain("exaone", "src/models/exaone.cpp"),
    plain("falcon", "src/models/falcon.cpp"),
    plain("gemma", "src/models/gemma.cpp"),
    plain("glm4", "src/models/glm4.cpp"),
    plain("gpt2", "src/models/gpt2.cpp"),
    plain("gptneox", "src/models/gptneox.cpp"),
    plain("granite", "src/models/granite.cpp"),
    plain("granitemoe", "src/models/granite-moe.cpp"),
    plain("grok", "src/models/grok.cpp"),
    plain("grovemoe", "src/models/grovemoe.cpp"),
    plain("hunyuan-moe", "src/models/hunyuan-moe.cpp"),
    plain("hunyuan-dense", "src/models/hunyuan-vl.cpp"),
    plain("hunyuan_vl", "src/models/hunyuan-vl.cpp"),
    plain("internlm2", "src/models/internlm2.cpp"),
    plain("jais", "src/models/jais.cpp"),
    plain("jais2", "src/models/jais2.cpp"),
    plain("maincoder", "src/models/maincoder.cpp"),
    plain("minicpm", "src/models/minicpm.cpp"),
    plain("minicpm3", "src/models/minicpm3.cpp"),
    plain("mpt", "src/models/mpt.cpp"),
    plain("nemotron", "src/models/nemotron.cpp"),
    plain("olmo", "src/models/olmo.cpp"),
    plain("olmoe", "src/models/olmoe.cpp"),
    plain("openelm", "src/models/openelm.cpp"),
    plain("orion", "src/models/orion.cpp"),
    plain("paddleocr", "src/models/ernie4-5.cpp"),
    plain("pangu-embedded", "src/models/pangu-embed.cpp"),
    plain("phi2", "src/models/phi2.cpp"),
    // phi3 reads sliding_window but sets no SWA layers (set_swa_pattern(1), n_swa 0).
    plain("phi3", "src/models/phi3.cpp"),
    plain("phimoe", "src/models/phimoe.cpp"),
    plain("plamo", "src/models/plamo.cpp"),
    plain("plm", "src/models/plm.cpp"),
    plain("qwen", "src/models/qwen.cpp"),
    plain("qwen2moe", "src/models/qwen2moe.cpp"),
    plain("qwen2vl", "src/models/qwen2vl.cpp"),
    plain("refact", "src/models/refact.cpp"),
    plain("smollm3", "src/models/smollm3.cpp"),
    plain("stablelm", "src/models/stablelm.cpp"),
    plain("starcoder", "src/models/starcoder.cpp"),
    plain("starcoder2", "src/models/starcoder2.cpp"),
    plain("talkie", "src/models/talkie.cpp"),
    plain("xverse", "src/models/xverse.cpp"),
};

// An architecture llama.cpp knows that launch does not plan, and why.
struct ArchRefusal {
  std::string_view name;
  std::string_view reason;
  std::string_view nearest = {};  // the closest supported family, when not the closest name
};

constexpr std::string_view kNoCacheEncoder =
    "an encoder (embedding or reranking) model: llama.cpp makes no KV cache for it "
    "(create_memory returns none) and launch serves text generation";
constexpr std::string_view kDiffusion =
    "a diffusion model: non-causal, no KV cache, and llama-server does not generate with it";
constexpr std::string_view kRecurrentOnly =
    "recurrent only (no attention layers): its state comes from per-architecture "
    "rules (wkv or SSM sizes) that gb10tune has not checked against llama.cpp";
constexpr std::string_view kHybridOther =
    "a hybrid of attention and recurrent (or linear-attention) layers whose layer "
    "selection and state sizes gb10tune has not checked against llama.cpp";
constexpr std::string_view kSparse =
    "sparse attention with an indexer cache (llama_kv_cache_dsa/msa/dsv4) that gb10tune "
    "does not size";
constexpr std::string_view kDraftHead =
    "a draft head for speculative decoding, loaded beside its target model, not served alone";
constexpr std::string_view kAudio = "a speech or audio model, not a text model llama-server serves";
constexpr std::string_view kLayout =
    "its load_arch_hparams rewrites the per-layer layout (sliding-window flags, nextn "
    "filters or layer order) in a way gb10tune has not checked against llama.cpp";

constexpr std::array kRefusals{
    ArchRefusal{"bert", kNoCacheEncoder},
    ArchRefusal{"jina-bert-v2", kNoCacheEncoder},
    ArchRefusal{"jina-bert-v3", kNoCacheEncoder},
    ArchRefusal{"nomic-bert", kNoCacheEncoder},
    ArchRefusal{"nomic-bert-moe", kNoCacheEncoder},
    ArchRefusal{"neo-bert", kNoCacheEncoder},
    ArchRefusal{"eurobert", kNoCacheEncoder},
    ArchRefusal{"modern-bert", kNoCacheEncoder},
    ArchRefusal{"gemma-embedding", kNoCacheEncoder},
    ArchRefusal{"llama-embed", "an embedding model: launch serves text generation"},
    ArchRefusal{"t5encoder", "the encoder half of T5 (embeddings only): no KV cache to plan"},
    ArchRefusal{"t5",
                "an encoder-decoder model (T5): its decoder's cross-attention cache is sized "
                "by the encoder's output, which gb10tune does not model"},
    ArchRefusal{"dream", kDiffusion},
    ArchRefusal{"llada", kDiffusion},
    ArchRefusal{"llada-moe", kDiffusion},
    ArchRefusal{"rnd1", kDiffusion},
    ArchRefusal{"mamba", kRecurrentOnly, "granitehybrid"},
    ArchRefusal{"mamba2", kRecurrentOnly, "granitehybrid"},
    ArchRefusal{"rwkv6", kRecurrentOnly},
    ArchRefusal{"rwkv6qwen2", kRecurrentOnly},
    ArchRefusal{"rwkv7", kRecurrentOnly},
    ArchRefusal{"arwkv7", kRecurrentOnly},
    ArchRefusal{"jamba", kHybridOther, "granitehybrid"},
    ArchRefusal{"falcon-h1", kHybridOther, "nemotron_h"},
    ArchRefusal{"plamo2", kHybridOther, "granitehybrid"},
    ArchRefusal{"lfm2", kHybridOther},
    ArchRefusal{"lfm2moe", kHybridOther},
    ArchRefusal{"kimi-linear", kHybridOther, "qwen3next"},
    ArchRefusal{"kimi-k3", kHybridOther},
    ArchRefusal{"bailingmoe3", kHybridOther},
    ArchRefusal{"minimax-01", kHybridOther, "qwen3next"},
    ArchRefusal{"deepseek4", kSparse},
    ArchRefusal{"deepseek32", kSparse},
    ArchRefusal{"glm-dsa", kSparse},
    ArchRefusal{"dots3note", kSparse},
    ArchRefusal{"minimax-m3", kSparse},
    ArchRefusal{"eagle3", kDraftHead},
    ArchRefusal{"dflash", kDraftHead},
    ArchRefusal{"gemma4-assistant", kDraftHead},
    ArchRefusal{"wavtokenizer-dec", kAudio},
    ArchRefusal{"qwen3tts", kAudio},
    ArchRefusal{"pockettts", kAudio},
    ArchRefusal{"granite_swa", kLayout},
    ArchRefusal{"graniteswitch", kLayout},
    ArchRefusal{"step35", kLayout},
    ArchRefusal{"mimo2", kLayout},
    ArchRefusal{"hy_v3", kLayout},
    ArchRefusal{"exaone4", kLayout},
    ArchRefusal{"exaone-moe", kLayout},
    ArchRefusal{"smallthinker", kLayout},
    ArchRefusal{"mellum", kLayout},
    ArchRefusal{"laguna", kLayout},
    ArchRefusal{"muse-glimmer", kLayout},
    ArchRefusal{"cohere2moe", kLayout},
    ArchRefusal{"nanbeige", kLayout},
    ArchRefusal{"gptj",
                "llama.cpp 3f545be names it but has no model implementation for it, so it "
                "cannot load the file"},
};

const ArchRule* find_rule(std::string_view architecture) {
  for (const ArchRule& rule : kArchitectures) {
    if (rule.name == architecture) {
      return &rule;
    }
  }
  return nullptr;
}

// Metadata lookups for one architecture, with llama.cpp's uint32 range.
class Hparams {
 public:
  Hparams(const gguf::GgufFile& file, std::string_view arch) : m_file(file), m_arch(arch) {}

  std::string key(std::string_view suffix) const { return fmt::format("{}.{}", m_arch, suffix); }
  bool has(std::string_view suffix) const { return m_file.has(key(suffix)); }

  Expected<std::uint32_t> u32(std::string_view suffix) const {
    const std::string name = key(suffix);
    const auto value = m_file.get_uint(name);
    if (!value) {
      return value.error();
    }
    return fit(name, *value);
  }

  Expected<std::uint32_t> u32_or(std::string_view suffix, std::uint32_t fallback) const {
    return has(suffix) ? u32(suffix) : Expected<std::uint32_t>(fallback);
  }

  // llama_model_loader::get_key_or_arr: a scalar for every layer or one value per layer.
  Expected<std::vector<std::uint32_t>> per_layer(std::string_view suffix, std::size_t n) const {
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

  // True when the key holds an array (llama.cpp's scalar-only get_key_or_arr then ignores it).
  bool is_array(std::string_view suffix) const {
    const gguf::MetadataEntry* entry = m_file.find(key(suffix));
    return entry != nullptr && entry->value.type() == gguf::ValueType::array;
  }

  Error error(std::string_view suffix, std::string_view problem) const {
    const std::string name = key(suffix);
    const gguf::MetadataEntry* entry = m_file.find(name);
    if (entry == nullptr) {
      return Error{fmt::format("{}: key '{}' {}", m_file.source(), name, problem)};
    }
    return Error{
        fmt::format("{}: offset {}: key '{}' {}", m_file.source(), entry->offset, name, problem)};
  }

 private:
  Expected<std::uint32_t> fit(const std::string& name, std::uint64_t value) const {
    if (value > std::numeric_limits<std::uint32_t>::max()) {
      return Error{
          fmt::format("{}: key '{}' is {}, more than llama.cpp's uint32 allows; the "
                      "file is corrupt",
                      m_file.source(), name, value)};
    }
    return static_cast<std::uint32_t>(value);
  }

  const gguf::GgufFile& m_file;
  std::string_view m_arch;
};

// llama_hparams::set_swa_pattern(n_pattern, dense_first = false): within the main stack a
// layer is SWA unless it is the last of each group of n_pattern (n_pattern 0: all SWA);
// MTP blocks are never SWA.
void set_swa_pattern(std::vector<LayerFacts>& layers, std::uint32_t n_layer,
                     std::uint32_t n_pattern) {
  for (LayerFacts& layer : layers) {
    const std::uint32_t il = layer.index;
    layer.sliding_window = il < n_layer && (n_pattern == 0 || il % n_pattern < n_pattern - 1);
  }
}

Expected<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b, const gguf::GgufFile& file,
                                    std::string_view what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return Error{fmt::format("{}: {} overflows 64 bits; the hyperparameters are corrupt",
                             file.source(), what)};
  }
  return product;
}

Expected<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b, const gguf::GgufFile& file,
                                    std::string_view what) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return Error{fmt::format("{}: {} overflows 64 bits; the hyperparameters are corrupt",
                             file.source(), what)};
  }
  return sum;
}

// The SSM sizes of a gated-delta-net layer (<arch>.ssm.*).
struct SsmSizes {
  std::uint64_t d_conv = 0;   // ssm.conv_kernel
  std::uint64_t d_inner = 0;  // ssm.inner_size
  std::uint64_t d_state = 0;  // ssm.state_size
  std::uint64_t dt_rank = 0;  // ssm.time_step_rank
  std::uint64_t n_group = 0;  // ssm.group_count
};

// The period of the sliding-window pattern: a scalar <arch>.attention.sliding_window_pattern,
// else `fallback` (llama.cpp ignores an array there).
Expected<std::uint32_t> swa_period(const Hparams& hp, std::uint32_t fallback) {
  if (!hp.has("attention.sliding_window_pattern") ||
      hp.is_array("attention.sliding_window_pattern")) {
    return fallback;
  }
  return hp.u32("attention.sliding_window_pattern");
}

// The sliding window of a Family::swa architecture (its load_arch_hparams): whether the
// window applies, its size and the period of set_swa_pattern.
Status apply_swa_spec(const Hparams& hp, const SwaSpec& spec, ModelFacts& facts) {
  const bool present = hp.has("attention.sliding_window");
  std::uint32_t window = 0;
  switch (spec.key) {
    case SwaKey::none:
      return {};
    case SwaKey::required: {
      const auto n_swa = hp.u32("attention.sliding_window");
      if (!n_swa) {
        return n_swa.error();
      }
      window = *n_swa;
      break;
    }
    case SwaKey::present_positive:
    case SwaKey::default_window: {
      const auto n_swa = hp.u32_or("attention.sliding_window", 0);
      if (!n_swa) {
        return n_swa.error();
      }
      if (spec.key == SwaKey::present_positive && (!present || *n_swa == 0)) {
        return {};
      }
      window = present ? *n_swa : spec.window;
      break;
    }
  }
  facts.sliding_window = window;
  const auto period = swa_period(hp, spec.period);
  if (!period) {
    return period.error();
  }
  set_swa_pattern(facts.layers, facts.main_layer_count, *period);
  return {};
}

// The SSM sizes every Mamba-2 / gated-delta-net loader reads (all required).
Status read_ssm_sizes(const Hparams& hp, SsmSizes& ssm) {
  const std::array<std::pair<std::string_view, std::uint64_t*>, 5> keys{{
      {"ssm.conv_kernel", &ssm.d_conv},
      {"ssm.inner_size", &ssm.d_inner},
      {"ssm.state_size", &ssm.d_state},
      {"ssm.time_step_rank", &ssm.dt_rank},
      {"ssm.group_count", &ssm.n_group},
  }};
  for (const auto& [key, target] : keys) {
    const auto value = hp.u32(key);
    if (!value) {
      return value.error();
    }
    *target = *value;
  }
  return {};
}

// nextn_predict_layers (0 when absent): fewer than block_count, as llama.cpp asserts.
Expected<std::uint32_t> read_nextn_count(const Hparams& hp, const ModelFacts& facts) {
  const auto nextn = hp.u32_or("nextn_predict_layers", 0);
  if (!nextn) {
    return nextn.error();
  }
  if (*nextn >= facts.block_count) {
    return hp.error("nextn_predict_layers",
                    fmt::format("is {}, but it must be less than block_count ({}) as llama.cpp "
                                "asserts",
                                *nextn, facts.block_count));
  }
  return *nextn;
}

// Architectures whose nextn blocks llama.cpp 3f545be creates with TENSOR_SKIP, so that the
// loader drops their tensors ("model has unused tensor … -- ignoring") while the blocks keep
// a KV cache like any other (create_memory has no filter for them): glm4moe, glm4 and
// bailingmoe2 always (src/models/glm4-moe.cpp, glm4.cpp, bailingmoe2.cpp: flags for
// i >= n_layer()); deepseek2 and mistral4 unless the server loads MTP for draft-mtp
// (src/models/deepseek2.cpp: mtp_flags), which launch does not plan for them.
constexpr std::array<std::string_view, 5> kUnloadedNextnArchitectures{
    "glm4moe", "glm4", "bailingmoe2", "deepseek2", "mistral4"};

Status read_unloaded_nextn_blocks(const Hparams& hp, ModelFacts& facts) {
  if (std::find(kUnloadedNextnArchitectures.begin(), kUnloadedNextnArchitectures.end(),
                facts.architecture) == kUnloadedNextnArchitectures.end()) {
    return {};
  }
  const auto nextn = read_nextn_count(hp, facts);
  if (!nextn) {
    return nextn.error();
  }
  facts.unloaded_block_count = *nextn;
  return {};
}

// The hybrid Qwen rules (src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp
// load_arch_hparams): SSM sizes, nextn blocks, recurrent layers.
Status apply_qwen_hybrid(const Hparams& hp, ModelFacts& facts, std::vector<bool>& recurrent,
                         SsmSizes& ssm) {
  if (Status s = read_ssm_sizes(hp, ssm); !s) {
    return s;
  }
  const auto nextn = read_nextn_count(hp, facts);
  if (!nextn) {
    return nextn.error();
  }
  facts.mtp_layer_count = *nextn;
  facts.main_layer_count = facts.block_count - *nextn;

  if (hp.has("attention.recurrent_layers")) {
    const auto flags = hp.per_layer("attention.recurrent_layers", facts.block_count);
    if (!flags) {
      return flags.error();
    }
    for (std::size_t il = 0; il < flags->size(); ++il) {
      recurrent[il] = (*flags)[il] != 0;
    }
  } else {
    const auto interval = hp.u32_or("full_attention_interval", 4);
    if (!interval) {
      return interval.error();
    }
    if (*interval == 0) {
      return hp.error("full_attention_interval",
                      "is 0; llama.cpp would divide by zero, so the file is corrupt");
    }
    for (std::uint32_t il = 0; il < facts.block_count; ++il) {
      recurrent[il] = il < facts.main_layer_count && (il + 1) % *interval != 0;
    }
  }
  return {};
}

}  // namespace

std::string_view supported_architectures() {
  static const std::string names = [] {
    std::string joined;
    for (const ArchRule& rule : kArchitectures) {
      joined += joined.empty() ? "" : ", ";
      joined += rule.name;
    }
    return joined;
  }();
  return names;
}

std::string_view nearest_supported_architecture(std::string_view full_name) {
  for (const ArchRefusal& refusal : kRefusals) {
    if (refusal.name == full_name && !refusal.nearest.empty()) {
      return refusal.nearest;
    }
  }
  // llama.cpp's names are at most ~20 characters: the first 64 of a longer (corrupt) one are
  // enough to compare, and keep the edit distances linear in the table, not in its length.
  constexpr std::size_t kCompared = 64;
  const std::string_view architecture = full_name.substr(0, kCompared);
  // The longest common prefix wins (a family's variants share a stem: "qwen2moe" is closest
  // to "qwen2"); ties and prefix-less names go to the smallest edit distance.
  const auto prefix = [&](std::string_view name) {
    std::size_t n = 0;
    while (n < name.size() && n < architecture.size() && name[n] == architecture[n]) {
      ++n;
    }
    return n;
  };
  const auto distance = [&](std::string_view name) {
    std::vector<std::size_t> row(name.size() + 1);
    for (std::size_t j = 0; j <= name.size(); ++j) {
      row[j] = j;
    }
    for (std::size_t i = 1; i <= architecture.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= name.size(); ++j) {
        const std::size_t above = row[j];
        const std::size_t substitute = diagonal + (architecture[i - 1] == name[j - 1] ? 0 : 1);
        row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
        diagonal = above;
      }
    }
    return row[name.size()];
  };
  const ArchRule* best = &kArchitectures.front();
  std::size_t best_prefix = prefix(best->name);
  std::size_t best_distance = distance(best->name);
  for (const ArchRule& rule : kArchitectures) {
    const std::size_t p = prefix(rule.name);
    if (p < best_prefix) {
      continue;
    }
    const std::size_t d = distance(rule.name);
    if (p > best_prefix || d < best_distance) {
      best = &rule;
      best_prefix = p;
      best_distance = d;
    }
  }
  return best->name;
}

bool is_supported_architecture(std::string_view architecture) {
  return find_rule(architecture) != nullptr;
}

std::string_view refusal_reason(std::string_view architecture) {
  for (const ArchRefusal& refusal : kRefusals) {
    if (refusal.name == architecture) {
      return refusal.reason;
    }
  }
  return {};
}

Status apply_layer_rules(const gguf::GgufFile& file, ModelFacts& facts) {
  const ArchRule* rule = find_rule(facts.architecture);
  if (rule == nullptr) {
    return Error{
        fmt::format("{}: architecture '{}' has no layer rules", file.source(), facts.architecture)};
  }
  const Hparams hp(file, facts.architecture);

  // llama_model::load_hparams (src/llama-model.cpp): the keys every architecture reads.
  const auto n_ctx_train = hp.u32("context_length");
  if (!n_ctx_train) {
    return n_ctx_train.error();
  }
  facts.context_length = *n_ctx_train;
  const auto n_embd = hp.u32("embedding_length");
  if (!n_embd) {
    return n_embd.error();
  }
  facts.embedding_length = *n_embd;
  const auto n_layer_all = hp.u32("block_count");
  if (!n_layer_all) {
    return n_layer_all.error();
  }
  if (*n_layer_all == 0 || *n_layer_all > kMaxLayers) {
    return hp.error("block_count", fmt::format("is {}; llama.cpp accepts 1 to {} layers",
                                               *n_layer_all, kMaxLayers));
  }
  facts.block_count = *n_layer_all;
  facts.main_layer_count = *n_layer_all;

  const auto n_expert = hp.u32_or("expert_count", 0);
  if (!n_expert) {
    return n_expert.error();
  }
  const auto n_expert_used = hp.u32_or("expert_used_count", 0);
  if (!n_expert_used) {
    return n_expert_used.error();
  }
  if (*n_expert_used > *n_expert || (*n_expert > 0 && *n_expert_used == 0)) {
    return hp.error("expert_used_count",
                    fmt::format("is {} with expert_count {}; llama.cpp requires 0 < used <= "
                                "count for MoE models and 0 for dense ones",
                                *n_expert_used, *n_expert));
  }
  facts.expert_count = *n_expert;
  facts.expert_used_count = *n_expert_used;
  if (Status s = read_unloaded_nextn_blocks(hp, facts); !s) {
    return s;
  }

  // Per-layer head counts, read before any nextn blocks are known (n_layer() = n_layer_all
  // then), so arrays hold one entry per block, MTP blocks included.
  std::vector<std::uint32_t> n_head(facts.block_count, 0);
  if (hp.has("attention.head_count")) {
    auto values = hp.per_layer("attention.head_count", facts.block_count);
    if (!values) {
      return values.error();
    }
    n_head = std::move(*values);
  }
  std::vector<std::uint32_t> n_head_kv = n_head;  // head_count_kv defaults to head_count
  if (hp.has("attention.head_count_kv")) {
    auto values = hp.per_layer("attention.head_count_kv", facts.block_count);
    if (!values) {
      return values.error();
    }
    n_head_kv = std::move(*values);
  }

  // Head sizes: n_embd / n_head(0) unless key_length / value_length say otherwise; SWA
  // layers may override them with key_length_swa / value_length_swa.
  std::uint32_t head_k = 0;
  std::uint32_t head_v = 0;
  if (n_head[0] > 0) {
    const auto k = hp.u32_or("attention.key_length", *n_embd / n_head[0]);
    const auto v = hp.u32_or("attention.value_length", *n_embd / n_head[0]);
    if (!k) {
      return k.error();
    }
    if (!v) {
      return v.error();
    }
    head_k = *k;
    head_v = *v;
  }
  const auto head_k_swa = hp.u32_or("attention.key_length_swa", head_k);
  if (!head_k_swa) {
    return head_k_swa.error();
  }
  const auto head_v_swa = hp.u32_or("attention.value_length_swa", head_v);
  if (!head_v_swa) {
    return head_v_swa.error();
  }

  facts.layers.assign(facts.block_count, LayerFacts{});
  for (std::uint32_t il = 0; il < facts.block_count; ++il) {
    facts.layers[il].index = il;
  }
  std::vector<bool> recurrent(facts.block_count, false);
  SsmSizes ssm;

  // Per-layer figures some families need: feed_forward_length (nemotron_h tells MLP-only
  // layers by it), read like head_count (get_key_or_arr over every block).
  std::vector<std::uint32_t> n_ff(facts.block_count, 0);
  if (rule->family == Family::nemotron_h && hp.has("feed_forward_length")) {
    auto values = hp.per_layer("feed_forward_length", facts.block_count);
    if (!values) {
      return values.error();
    }
    n_ff = std::move(*values);
  }
  // llama_hparams::n_layer_kv_from_start: when set, only the first that many layers keep
  // KV; the others reuse an earlier layer's cache (create_memory's reuse callback).
  std::uint32_t kv_from_start = facts.block_count;

  switch (rule->family) {
    case Family::dense:
      break;
    case Family::swa:
    case Family::gemma3n: {
      if (Status s = apply_swa_spec(hp, rule->swa, facts); !s) {
        return s;
      }
      if (rule->family == Family::gemma3n) {
        // src/models/gemma3n.cpp: n_layer_kv_from_start = 20 whatever the layer count.
        kv_from_start = std::min<std::uint32_t>(20, facts.block_count);
      }
      break;
    }
    case Family::gemma4: {
      // src/models/gemma4.cpp: SWA flags from sliding_window_pattern (a bool per layer, or
      // one scalar for all), required, as are sliding_window and the SWA head sizes;
      // shared_kv_layers (default 0) trailing layers reuse earlier KV.
      const auto n_swa = hp.u32("attention.sliding_window");
      if (!n_swa) {
        return n_swa.error();
      }
      for (const std::string_view key : {std::string_view("attention.key_length_swa"),
                                         std::string_view("attention.value_length_swa")}) {
        if (!hp.has(key)) {
          return hp.error(key, "is missing; llama.cpp requires it for gemma4");
        }
      }
      const auto flags = hp.per_layer("attention.sliding_window_pattern", facts.block_count);
      if (!flags) {
        return flags.error();
      }
      facts.sliding_window = *n_swa;
      for (LayerFacts& layer : facts.layers) {
        layer.sliding_window = (*flags)[layer.index] != 0;
      }
      const auto shared = hp.u32_or("attention.shared_kv_layers", 0);
      if (!shared) {
        return shared.error();
      }
      if (*shared > 0) {
        // create_memory's reuse callback asserts n_layer_kv_from_start >= 2.
        if (*shared + 2 > facts.block_count) {
          return hp.error("attention.shared_kv_layers",
                          fmt::format("is {} of {} layers; llama.cpp needs at least 2 layers "
                                      "with their own KV, so the file is corrupt",
                                      *shared, facts.block_count));
        }
        kv_from_start = facts.block_count - *shared;
        // create_memory's reuse callback: a shared SWA layer reuses layer kv_from_start - 2, a
        // shared full one layer kv_from_start - 1; llama.cpp asserts that layer is in the
        // same (SWA or full) cache.
        for (std::uint32_t il = kv_from_start; il < facts.block_count; ++il) {
          const bool swa = facts.layers[il].sliding_window;
          const std::uint32_t source = kv_from_start - (swa ? 2 : 1);
          if (facts.layers[source].sliding_window != swa) {
            return hp.error(
                "attention.sliding_window_pattern",
                fmt::format("makes shared layer {} ({}) reuse layer {} ({}); llama.cpp asserts "
                            "that the last two layers with KV are a sliding-window one and then "
                            "a full one, so the file is corrupt",
                            il, swa ? "sliding window" : "full", source,
                            swa ? "full" : "sliding window"));
          }
        }
      }
      break;
    }
    case Family::llama4: {
      // src/models/llama4.cpp: chunked attention (LLAMA_SWA_TYPE_CHUNKED) unless
      // sliding_window is present and 0; the chunk is 8192 whatever the key says, the
      // period a scalar sliding_window_pattern, default 4 (3 chunked, 1 full). The chunked
      // cache is sized like an SWA one (llama_kv_cache_iswa).
      const bool present = hp.has("attention.sliding_window");
      const auto n_swa = hp.u32_or("attention.sliding_window", 0);
      if (!n_swa) {
        return n_swa.error();
      }
      if (!present || *n_swa > 0) {
        facts.sliding_window = 8192;
        const auto period = swa_period(hp, 4);
        if (!period) {
          return period.error();
        }
        set_swa_pattern(facts.layers, facts.main_layer_count, *period);
      }
      break;
    }
    case Family::mla: {
      // src/models/deepseek2.cpp: MLA when key_length_mla and value_length_mla are both
      // set (llama_hparams::is_mla). The cache then holds, per token and layer, only K of
      // n_embd_head_k × n_head_kv (the converter writes key_length = kv_lora_rank + n_rot
      // and head_count_kv = 1) and no V (llama_kv_cache: has_v = !is_mla). Without the
      // two keys (older conversions) K and V are cached like plain attention.
      const auto k_mla = hp.u32_or("attention.key_length_mla", 0);
      const auto v_mla = hp.u32_or("attention.value_length_mla", 0);
      if (!k_mla) {
        return k_mla.error();
      }
      if (!v_mla) {
        return v_mla.error();
      }
      if ((*k_mla == 0) != (*v_mla == 0)) {
        return hp.error(*k_mla == 0 ? "attention.value_length_mla" : "attention.key_length_mla",
                        "is set without its partner (key_length_mla and value_length_mla "
                        "come together); llama.cpp asserts on this file");
      }
      facts.mla = *k_mla != 0;
      if (facts.mla) {
        const auto latent = hp.u32("attention.kv_lora_rank");
        if (!latent) {
          return latent.error();
        }
        facts.mla_latent_width = *latent;
        facts.mla_q_width = *k_mla;
      }
      break;
    }
    case Family::qwen_hybrid: {
      if (Status s = apply_qwen_hybrid(hp, facts, recurrent, ssm); !s) {
        return s;
      }
      facts.recurrent_rollback = rule->rollback;
      break;
    }
    case Family::nemotron_h:
    case Family::granite_hybrid: {
      if (Status s = read_ssm_sizes(hp, ssm); !s) {
        return s;
      }
      if (rule->family == Family::nemotron_h) {
        // src/models/nemotron-h.cpp: nextn blocks are appended past the main stack; their
        // cache placement (filter_attn below covers every block) is not checked here.
        const auto nextn = hp.u32_or("nextn_predict_layers", 0);
        if (!nextn) {
          return nextn.error();
        }
        if (*nextn > 0) {
          facts.unsupported_reason = fmt::format(
              "{} with MTP blocks ({}.nextn_predict_layers = {}): where llama.cpp caches "
              "them is not covered by gb10tune's layer rules yet",
              facts.architecture, facts.architecture, *nextn);
          facts.layers.clear();
          return {};
        }
      }
      // A layer is recurrent iff head_count_kv is 0 (nemotron_h: and feed_forward_length 0,
      // else it is an MLP-only block).
      for (std::uint32_t il = 0; il < facts.block_count; ++il) {
        recurrent[il] =
            n_head_kv[il] == 0 && (rule->family == Family::granite_hybrid || n_ff[il] == 0);
      }
      facts.recurrent_rollback = rule->rollback;
      break;
    }
  }

  // Layers and KV widths: llama_hparams::n_embd_k_gqa / n_embd_v_gqa
  // (src/llama-hparams.cpp) = n_embd_head_{k,v}(il) × n_head_kv(il), the head size being the
  // SWA one on SWA layers. Which layers keep KV: llama_model::create_memory — hybrid Qwen
  // models keep it for il < n_layer() && !is_recr(il) (the MTP blocks get theirs in the
  // draft context); every other architecture here keeps it for every block.
  const bool hybrid = rule->family == Family::qwen_hybrid || rule->family == Family::nemotron_h ||
                      rule->family == Family::granite_hybrid;
  for (LayerFacts& layer : facts.layers) {
    const std::uint32_t il = layer.index;
    layer.mtp = il >= facts.main_layer_count;
    layer.recurrent = recurrent[il];
    layer.head_count = n_head[il];
    layer.head_count_kv = n_head_kv[il];
    const std::uint64_t k_head = layer.sliding_window ? *head_k_swa : head_k;
    const std::uint64_t v_head = layer.sliding_window ? *head_v_swa : head_v;
    const std::uint64_t k_width = k_head * n_head_kv[il];
    const std::uint64_t v_width = facts.mla ? 0 : v_head * n_head_kv[il];
    if (k_width > std::numeric_limits<std::uint32_t>::max() ||
        v_width > std::numeric_limits<std::uint32_t>::max()) {
      return hp.error("attention.head_count_kv",
                      fmt::format("gives layer {} a KV width beyond uint32; the head counts "
                                  "or head sizes are corrupt",
                                  il));
    }
    layer.k_width = static_cast<std::uint32_t>(k_width);
    layer.v_width = static_cast<std::uint32_t>(v_width);
    switch (rule->family) {
      case Family::qwen_hybrid:  // filter_attn: il < n_layer() && !is_recr(il)
        layer.main_kv = !layer.mtp && !layer.recurrent;
        break;
      case Family::nemotron_h:  // filter_attn: !is_recr(il) && n_ff(il) == 0
        layer.main_kv = !layer.recurrent && n_ff[il] == 0;
        break;
      case Family::granite_hybrid:  // the default filter_attn: !is_recr(il)
        layer.main_kv = !layer.recurrent;
        break;
      default:  // llama_hparams::has_kv
        layer.main_kv = il < kv_from_start;
        layer.kv_shared = !layer.main_kv;
        break;
    }
    facts.v_width_max = std::max(facts.v_width_max, layer.v_width);
  }

  // Recurrent state: llama_memory_recurrent allocates, per layer with il < n_layer() &&
  // is_recr(il), an f32 row of n_embd_r() and one of n_embd_s() per cell, where
  // (llama_hparams::n_embd_r / n_embd_s for SSM-style layers, gated delta net included)
  //   n_embd_r = (ssm_d_conv - 1) × (ssm_d_inner + 2 × ssm_n_group × ssm_d_state)
  //   n_embd_s = ssm_d_state × ssm_d_inner
  for (const LayerFacts& layer : facts.layers) {
    if (layer.recurrent && !layer.mtp) {
      ++facts.recurrent_layer_count;
    }
  }
  if (hybrid) {
    const std::uint64_t d_conv = ssm.d_conv;
    const std::uint64_t d_inner = ssm.d_inner;
    const std::uint64_t d_state = ssm.d_state;
    const std::uint64_t n_group = ssm.n_group;
    const auto groups =
        checked_mul(2 * n_group, d_state, file, "2 × ssm.group_count × ssm.state_size");
    if (!groups) {
      return groups.error();
    }
    const auto conv_channels = checked_add(d_inner, *groups, file, "the conv state size");
    if (!conv_channels) {
      return conv_channels.error();
    }
    const auto r =
        checked_mul(d_conv > 0 ? d_conv - 1 : 0, *conv_channels, file, "the conv state size");
    if (!r) {
      return r.error();
    }
    const auto s = checked_mul(d_state, d_inner, file, "the delta state size");
    if (!s) {
      return s.error();
    }
    facts.ssm_conv_kernel = static_cast<std::uint32_t>(ssm.d_conv);
    facts.ssm_inner_size = static_cast<std::uint32_t>(ssm.d_inner);
    facts.ssm_state_size = static_cast<std::uint32_t>(ssm.d_state);
    facts.ssm_group_count = static_cast<std::uint32_t>(ssm.n_group);
    facts.ssm_time_step_rank = static_cast<std::uint32_t>(ssm.dt_rank);
    facts.conv_state_width = *r;
    facts.ssm_state_width = *s;
    const auto widths = checked_add(*r, *s, file, "the recurrent state size");
    if (!widths) {
      return widths.error();
    }
    const auto per_layer = checked_mul(*widths, 4, file, "the recurrent state size");
    if (!per_layer) {
      return per_layer.error();
    }
    const auto total =
        checked_mul(*per_layer, facts.recurrent_layer_count, file, "the recurrent state size");
    if (!total) {
      return total.error();
    }
    facts.recurrent_bytes_per_sequence = *total;
  }
  return {};
}

namespace {

// The block index of a "blk.N.…" tensor name, or -1.
std::int64_t block_index(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) {
    return -1;
  }
  std::int64_t index = 0;
  std::size_t i = kPrefix.size();
  if (i >= name.size() || name[i] < '0' || name[i] > '9') {
    return -1;
  }
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    index = index * 10 + (name[i] - '0');
    if (index > std::numeric_limits<std::int32_t>::max()) {
      return -1;
    }
  }
  return i < name.size() && name[i] == '.' ? index : -1;
}

// The input layer's tensors (llama-arch.cpp: LLM_TENSOR_LAYER_INPUT with GGML_OP_GET_ROWS):
// the loader puts them in the CPU's buffers whatever -ngl says.
bool is_input_layer(std::string_view name) {
  for (const std::string_view stem :
       {"token_embd.", "position_embd.", "token_types.", "per_layer_token_embd."}) {
    if (name.starts_with(stem)) {
      return true;
    }
  }
  return false;
}

// Routed expert tensors: ffn_gate_exps, ffn_up_exps, ffn_down_exps, ffn_gate_up_exps (their
// weights, biases and scales); shared experts are *_shexp and always run.
bool is_routed_expert(std::string_view name) {
  return name.find("_exps.") != std::string_view::npos;
}

// ggml_n_dims: the dimensions up to the last one larger than 1 (at least 1).
std::uint32_t used_dims(const gguf::TensorInfo& tensor) {
  std::uint32_t dims = 1;
  for (std::uint32_t i = 1; i < tensor.shape.size(); ++i) {
    if (tensor.shape[i] > 1) {
      dims = i + 1;
    }
  }
  return dims;
}

// How the graph uses `tensor`, from its name (llama-arch.cpp LLM_TENSOR_INFOS): the input
// layer's lookups, biases (GGML_OP_ADD) and the few repeating tensors with another op (row
// lookups such as nextn.embed_tokens, compressor position embeddings, relative-position
// biases, expert-id tables; convolutions; the eagle3/dspark lookup tables) are not matrix
// products; routed experts are mul_mat_id on a 3-D stack; any other 2-D weight is mul_mat.
// A multiplied weight of another shape (MLA's 3-D attn_k_b) counts as other: only those two
// shapes matter to the buffer types that take matrix products (ggml-cpu repack.cpp).
ModelFacts::WeightUse weight_use(const gguf::TensorInfo& tensor) {
  const std::string_view name = tensor.name;
  if (is_input_layer(name) || !name.ends_with(".weight")) {
    return ModelFacts::WeightUse::other;
  }
  for (const std::string_view part :
       {"nextn.embed_tokens", "compressor_ape", "attn_rel_b", "ffn_gate_tid2eid", "ssm_conv1d",
        "shortconv.conv", "conv1d", "posnet.", "convnext.", "d2t", "markov_w1"}) {
    if (name.find(part) != std::string_view::npos) {
      return ModelFacts::WeightUse::other;
    }
  }
  const std::uint32_t dims = used_dims(tensor);
  if (is_routed_expert(name)) {
    return dims == 3 ? ModelFacts::WeightUse::mul_mat_id : ModelFacts::WeightUse::other;
  }
  return dims == 2 ? ModelFacts::WeightUse::mul_mat : ModelFacts::WeightUse::other;
}

}  // namespace

void apply_weight_stats(const std::vector<const gguf::GgufFile*>& files, ModelFacts& facts) {
  std::uint64_t expert_main = 0;
  std::uint64_t expert_read = 0;
  bool has_output = false;
  facts.layer_weight_bytes.assign(facts.block_count, 0);
  facts.tensor_spans.clear();
  const std::uint64_t first_unloaded =
      std::uint64_t{facts.block_count} - std::min(facts.unloaded_block_count, facts.block_count);
  for (std::size_t file_index = 0; file_index < files.size(); ++file_index) {
    const gguf::GgufFile* file = files[file_index];
    for (const gguf::TensorInfo& tensor : file->tensors()) {
      {
        const std::int64_t owner = block_index(tensor.name);
        ModelFacts::TensorSpan span;
        span.file = static_cast<std::uint32_t>(file_index);
        span.offset = tensor.offset;
        span.bytes = tensor.bytes;
        span.type = tensor.type;
        span.rows = tensor.shape[1];
        span.use = weight_use(tensor);
        const bool in_blocks = owner >= 0 && static_cast<std::uint64_t>(owner) < facts.block_count;
        if (is_input_layer(tensor.name)) {
          span.layer = ModelFacts::kInputLayer;
        } else if (!in_blocks) {
          span.layer = ModelFacts::kOutputLayer;
        } else {
          span.layer =
              static_cast<std::uint64_t>(owner) >= first_unloaded ? ModelFacts::kUnloaded : owner;
        }
        facts.tensor_spans.push_back(span);
      }
      ++facts.tensor_count;
      facts.parameter_count += tensor.elements;
      facts.weight_bytes += tensor.bytes;
      if (facts.tensor_spans.back().layer == ModelFacts::kUnloaded) {
        facts.unloaded_weight_bytes += tensor.bytes;
        continue;
      }
      if (tensor.name == "per_layer_token_embd.weight") {
        facts.per_layer_input_width = tensor.shape[0];
      }
      if (tensor.name == "token_embd.weight") {
        facts.token_embedding_bytes = tensor.bytes;
        facts.token_embedding_type = tensor.type;
        facts.vocab_size = tensor.shape[1];
      } else if (tensor.name == "output.weight") {
        has_output = true;
      }
      const std::int64_t block = block_index(tensor.name);
      if (facts.tensor_spans.back().layer == ModelFacts::kInputLayer) {
        facts.input_weight_bytes += tensor.bytes;
      } else if (block >= 0 &&
                 static_cast<std::uint64_t>(block) < facts.layer_weight_bytes.size()) {
        facts.layer_weight_bytes[static_cast<std::size_t>(block)] += tensor.bytes;
      } else {
        facts.output_weight_bytes += tensor.bytes;
      }
      const bool mtp = block >= 0 && facts.mtp_layer_count > 0 &&
                       static_cast<std::uint64_t>(block) >= facts.main_layer_count;
      const std::string_view name = tensor.name;
      const auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
      };
      LayerFacts* layer = block >= 0 && static_cast<std::uint64_t>(block) < facts.layers.size()
                              ? &facts.layers[static_cast<std::size_t>(block)]
                              : nullptr;
      if (block >= 0 && ends_with(".ffn_up.weight")) {
        std::uint64_t& width = mtp ? facts.mtp_ffn_width : facts.ffn_width;
        width = std::max(width, tensor.shape[1]);
        if (layer != nullptr) {
          layer->ffn_width = tensor.shape[1];
        }
      } else if (block >= 0 &&
                 (ends_with(".ffn_up_exps.weight") || ends_with(".ffn_gate_exps.weight"))) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1]);
        if (layer != nullptr) {
          layer->experts = true;
        }
      } else if (block >= 0 && ends_with(".ffn_gate_up_exps.weight")) {
        facts.expert_ffn_width = std::max(facts.expert_ffn_width, tensor.shape[1] / 2);
        if (layer != nullptr) {
          layer->experts = true;
        }
      } else if (block >= 0 && ends_with(".exp_probs_b.bias")) {
        facts.expert_selection_bias = true;
      } else if (block >= 0 && ends_with(".ffn_up_shexp.weight")) {
        facts.shared_ffn_width = std::max(facts.shared_ffn_width, tensor.shape[1]);
      }
      if (mtp) {
        facts.mtp_weight_bytes += tensor.bytes;
        continue;
      }
      if (is_routed_expert(tensor.name)) {
        facts.expert_weight_bytes += tensor.bytes;
        expert_main += tensor.bytes;
        // Experts are stacked whole along the outermost dimension: each one is bytes / count.
        expert_read += facts.expert_count > 0
                           ? tensor.bytes / facts.expert_count * facts.expert_used_count
                           : tensor.bytes;
      }
    }
  }
  facts.tied_output = !has_output;
  if (facts.tied_output) {
    facts.output_weight_bytes += facts.token_embedding_bytes;  // TENSOR_DUPLICATED on its device
  }
  // The input layer is a row lookup per token, unless token_embd doubles as the LM head.
  const std::uint64_t lookups =
      facts.input_weight_bytes - (facts.tied_output ? facts.token_embedding_bytes : 0);
  facts.bytes_read_per_token = facts.weight_bytes - facts.unloaded_weight_bytes -
                               facts.mtp_weight_bytes - lookups - expert_main + expert_read;
}

}  // namespace gb10tune::model::detail

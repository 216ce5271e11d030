// The architecture table: the rows of kArchitectures and kRefusals follow llama.cpp 3f545be
// (src/llama-arch.cpp LLM_ARCH_NAMES, each architecture's load_arch_hparams).
#include "architecture_table.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace gb10tune::model::detail {

namespace {

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

}  // namespace

const ArchRule* find_rule(std::string_view architecture) {
  for (const ArchRule& rule : kArchitectures) {
    if (rule.name == architecture) {
      return &rule;
    }
  }
  return nullptr;
}

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

}  // namespace gb10tune::model::detail

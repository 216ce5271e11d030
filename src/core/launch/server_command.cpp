#include "gb10tune/launch/server_command.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/launch/memory_options.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

constexpr std::int64_t kLlamaDefaultCacheRamMib = 8192;

// Collects pieces, adaptations and refusals while the command is built.
class Builder {
 public:
  Builder(const server::ServerFlags& flags, bool force) : m_flags(flags), m_force(force) {}

  bool has(std::string_view name) const {
    const auto* spec = m_flags.find(name);
    return spec != nullptr && !spec->removed();
  }
  void add(std::string_view rule, std::vector<std::string> args) {
    m_out.pieces.push_back({std::move(args), rule});
  }
  void adapt(std::string text) { m_out.adaptations.push_back(std::move(text)); }
  void warn(std::string text) { m_out.warnings.push_back(std::move(text)); }
  // A refusal: an Error unless --force, then a warning.
  void refuse(std::string text) {
    if (m_force) {
      m_out.warnings.push_back(text + " (going on: --force)");
    } else if (!m_refusal) {
      m_refusal = Error{std::move(text), ExitCode::usage};
    }
  }
  const std::optional<Error>& refusal() const { return m_refusal; }
  ServerCommand& out() { return m_out; }

 private:
  const server::ServerFlags& m_flags;
  bool m_force;
  ServerCommand m_out;
  std::optional<Error> m_refusal;
};

std::string newer_build(std::string_view option) {
  return fmt::format(
      "this llama-server build has no {}; it needs llama.cpp from 2026-08 "
      "(commit 3f545be) or newer: rebuild llama.cpp (see `gb10tune probe` for "
      "the build line)",
      option);
}

void add_gpu_layers(Builder& b, const LaunchSettings& s, const model::ModelFacts& model) {
  const auto& value = s.at("gpu_layers").value;
  const std::uint32_t all = std::max<std::uint32_t>(99, model.main_layer_count + 1);
  std::uint32_t layers = all;
  if (value.is_number_integer()) {
    layers = static_cast<std::uint32_t>(value.get<std::int64_t>());
  } else if (value.get<std::string>() != "all") {
    const auto n = parse_u64(value.get<std::string>());
    layers = n ? static_cast<std::uint32_t>(*n) : all;
  }
  if (model.main_layer_count != 0 && layers < model.main_layer_count + 1) {
    b.warn(
        fmt::format("gpu_layers {} leaves layers of the model's {} (+ output) on the CPU, "
                    "which reads at ~76 GB/s instead of the GPU path (K1)",
                    layers, model.main_layer_count));
  }
  b.out().gpu_layers = layers;
  b.add("all-layers-on-gpu", {"-ngl", std::to_string(layers)});
}

void add_flash_attention(Builder& b, const server::ServerFlags& flags, const std::string& mode) {
  const auto* fa = flags.find("-fa");
  if (fa == nullptr) {
    b.adapt("this build has no -fa option: flash attention is left to the build");
    return;
  }
  if (fa->takes_value()) {
    b.add("flash-attention", {"-fa", mode});
  } else if (mode == "on") {
    b.adapt("-fa is a plain switch in this build: passing -fa");
    b.add("flash-attention", {"-fa"});
  } else {
    b.adapt(fmt::format("-fa is a plain switch in this build: flash_attn {} passes nothing", mode));
  }
}

void add_mtp(Builder& b, const LaunchSettings& s, const model::ModelFacts& model,
             const server::ServerFlags& flags) {
  const auto mode = s.text("mtp");
  if (mode == "off") {
    return;
  }
  if (!model.has_mtp()) {
    if (mode == "on") {
      b.refuse(
          fmt::format("mtp is on but {} has no MTP head ({}.nextn_predict_layers is 0); "
                      "use mtp auto or off",
                      model.source, model.architecture));
    }
    return;
  }
  if (!flags.accepts_value("--spec-type", "draft-mtp")) {
    b.refuse(
        fmt::format("the model has an MTP head but {}; or set mtp off (--no-mtp) and lose "
                    "~+57% decode (K4, K9)",
                    newer_build("--spec-type draft-mtp")));
    return;
  }
  b.out().mtp = true;
  const auto depth = static_cast<std::uint32_t>(s.integer("draft_n_max"));
  b.add("mtp-when-model-has-head", {"--spec-type", "draft-mtp"});
  if (b.has("--spec-draft-n-max")) {
    b.out().draft_n_max = depth;
    b.add("draft-n-max-4", {"--spec-draft-n-max", std::to_string(depth)});
  } else {
    b.out().draft_n_max = 3;
    b.adapt("this build has no --spec-draft-n-max: the draft depth stays at its default");
  }
}

void add_unified_cache(Builder& b, const LaunchSettings& s, std::uint32_t slots) {
  const auto mode = s.text("kv_unified");
  const bool unified = mode == "on" || (mode == "auto" && slots > 1);
  const auto ram = s.integer("cache_ram_mib");
  b.out().cache_ram_mib = ram;
  if (unified) {
    if (b.has("-kvu")) {
      b.out().kv_unified = true;
      b.add("kvu-with-cache-ram", {"-kvu"});
    } else if (slots > 1) {
      b.refuse(fmt::format("{} slots need one unified KV pool (K8), but {}; or use --slots 1",
                           slots, newer_build("-kvu")));
    }
  }
  if (ram == kLlamaDefaultCacheRamMib && slots <= 1) {
    return;  // llama.cpp's default; nothing to say
  }
  if (b.has("--cache-ram")) {
    b.add("kvu-with-cache-ram", {"--cache-ram", std::to_string(ram)});
  } else if (slots > 1) {
    b.refuse(fmt::format("{} slots need a prompt cache (--cache-ram, K8), but {}", slots,
                         newer_build("--cache-ram")));
  } else {
    b.adapt("this build has no --cache-ram: cache_ram_mib is not passed");
  }
}

// The spellings of every option the plan sets, to catch extra arguments that override them.
std::vector<const server::FlagSpec*> planned_specs(const ServerCommand& out,
                                                   const server::ServerFlags& flags) {
  std::vector<const server::FlagSpec*> specs;
  for (const auto& piece : out.pieces) {
    if (const auto* spec = flags.find(piece.args.front())) {
      specs.push_back(spec);
    }
  }
  return specs;
}

void add_extra_args(Builder& b, const std::vector<std::string>& extra,
                    const server::ServerFlags& flags) {
  if (extra.empty()) {
    return;
  }
  const auto planned = planned_specs(b.out(), flags);
  for (const auto& arg : extra) {
    if (!starts_with(arg, "-") || arg == "-" || parse_u64(arg.substr(1))) {
      continue;  // a value
    }
    const auto name = arg.substr(0, arg.find('='));
    const auto* spec = flags.find(name);
    if (spec == nullptr) {
      b.refuse(
          fmt::format("extra argument {}: this llama-server build does not accept it (see "
                      "llama-server --help)",
                      arg));
    } else if (spec->removed()) {
      b.refuse(fmt::format("extra argument {}: {}", arg, spec->description));
    } else if (std::find(planned.begin(), planned.end(), spec) != planned.end()) {
      b.refuse(
          fmt::format("extra argument {} overrides the planned {}, and the memory plan "
                      "would not know; set it through launch's own option instead",
                      arg, spec->names.back()));
    } else if (const MemoryOption* memory = find_memory_option(spec->key())) {
      b.refuse(fmt::format("extra argument {} {}; {}", arg, memory_option_reason(*memory),
                           memory->own_option.empty()
                               ? "drop it (--force starts it with a plan that does not know)"
                               : "give it there instead"));
    } else if (b.out().mtp && spec->key() == "backend-sampling") {
      b.refuse(
          fmt::format("extra argument {} together with MTP: decode −57%, prefill −87% in "
                      "the report (K6); drop it",
                      arg));
    }
  }
  b.add("extra-arguments", extra);
}

}  // namespace

const std::vector<LaunchRule>& launch_rules() {
  static const std::vector<LaunchRule> rules = {
      {"model", "", "the model file"},
      {"all-layers-on-gpu", "K1",
       "every layer on the GPU: the device path reads ~46% faster "
       "than the managed path and 3x the CPU"},
      {"context", "K17", "context of all slots together: ctx_per_slot x slots"},
      {"slots", "K10", "parallel slots: serialize for latency, several for throughput"},
      {"flash-attention", "K9", "flash attention on, as in the tuned configuration"},
      {"mtp-when-model-has-head", "K4",
       "draft-mtp speculative decoding: the model has an MTP "
       "head"},
      {"draft-n-max-4", "K4", "4 drafted tokens: mean accepted length 2.88 → 3.70, +15.6%"},
      {"kvu-with-cache-ram", "K8",
       "one unified KV pool and a prompt cache large enough to "
       "keep a full slot's state"},
      {"templates", "K17", "jinja chat templates"},
      {"listen", "", "address and port"},
      {"projector", "K14", "the multimodal projector beside the model"},
      {"projector-on-cpu", "", "the projector kept in host memory (mmproj_offload false)"},
      {"cache-types", "", "KV cache types other than f16"},
      {"batch", "", "physical batch size other than 512"},
      {"swa-full", "", "full-size cache for sliding-window layers"},
      {"no-mmap-on-gb10", "K19", "no mmap loading on GB10 (224 s vs 22 s)"},
      {"extra-arguments", "", "given after --, passed as they are"},
  };
  return rules;
}

Expected<ServerCommand> build_server_command(const LaunchSettings& s,
                                             const model::ModelFacts& model,
                                             const server::ServerFlags& flags,
                                             const CommandInputs& in) {
  Builder b(flags, in.force);
  const auto slots = static_cast<std::uint32_t>(s.integer("slots"));
  auto per_slot = static_cast<std::uint64_t>(s.integer("ctx_per_slot"));
  if (per_slot == 0) {
    per_slot = model.context_length;
  }
  b.out().slots = slots;
  b.out().ctx_per_slot = per_slot;
  b.out().ctx_total = per_slot * slots;

  b.add("model", {"-m", in.model_path});
  add_gpu_layers(b, s, model);
  b.add("context", {"-c", std::to_string(b.out().ctx_total)});
  b.add("slots", {"-np", std::to_string(slots)});
  add_flash_attention(b, flags, s.text("flash_attn"));
  add_mtp(b, s, model, flags);
  add_unified_cache(b, s, slots);
  if (s.boolean("jinja")) {
    if (b.has("--jinja")) {
      b.add("templates", {"--jinja"});
    } else {
      b.adapt("this build has no --jinja: its default template engine is used");
    }
  } else if (b.has("--no-jinja")) {
    b.add("templates", {"--no-jinja"});
  }
  b.add("listen", {"--host", s.text("host"), "--port", std::to_string(s.integer("port"))});
  if (!in.mmproj_path.empty()) {
    b.add("projector", {"--mmproj", in.mmproj_path});
    if (!s.boolean("mmproj_offload")) {
      if (b.has("--no-mmproj-offload")) {
        b.add("projector-on-cpu", {"--no-mmproj-offload"});
      } else {
        b.adapt("this build has no --no-mmproj-offload: the projector goes where it decides");
      }
    }
  }
  const auto ctk = s.text("cache_type_k");
  const auto ctv = s.text("cache_type_v");
  if (ctk != "f16" || ctv != "f16") {
    b.add("cache-types", {"-ctk", ctk, "-ctv", ctv});
  }
  if (s.integer("ubatch") != 512) {
    b.add("batch", {"-ub", std::to_string(s.integer("ubatch"))});
  }
  if (s.boolean("swa_full")) {
    b.add("swa-full", {"--swa-full"});
  }
  if (in.gb10) {
    if (b.has("--load-mode")) {
      b.adapt(
          "this build's --load-mode auto already avoids mmap on the GB10's integrated GPU "
          "(K19)");
    } else if (b.has("--no-mmap")) {
      b.add("no-mmap-on-gb10", {"--no-mmap"});
    }
  }
  add_extra_args(b, s.text_list("extra_args"), flags);

  if (b.refusal()) {
    return *b.refusal();
  }
  auto out = std::move(b.out());
  out.argv.push_back(in.server_path);
  for (const auto& piece : out.pieces) {
    out.argv.insert(out.argv.end(), piece.args.begin(), piece.args.end());
  }
  return out;
}

}  // namespace gb10tune::launch

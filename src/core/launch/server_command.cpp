#include "gb10tune/launch/server_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  // A refusal: an Error unless --force, then a warning.
  void refuse(std::string text) {
    if (m_force) {
      m_out.warnings.push_back(text + " (going on: --force)");
    } else if (!m_refusal) {
      m_refusal = Error{text + " (--force starts it anyway)", ExitCode::usage};
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
  b.out().gpu_layers = layers;  // fewer than the model's layers: judge_command's K1 warning
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
  // 0: llama.cpp's own default (0.00 in 3f545be), so no option.
  if (const double p_min = s.number("draft_p_min"); p_min > 0) {
    if (b.has("--spec-draft-p-min")) {
      b.add("draft-p-min", {"--spec-draft-p-min", fmt::format("{}", p_min)});
    } else {
      b.adapt(
          "this build has no --spec-draft-p-min: the draft's minimum probability stays at "
          "its default");
    }
  }
}

// 0: llama.cpp's own default (its --help says which), so no option.
void add_threads(Builder& b, const LaunchSettings& s) {
  const std::int64_t threads = s.integer("threads");
  if (threads <= 0) {
    return;
  }
  if (b.has("--threads")) {
    b.add("threads", {"--threads", std::to_string(threads)});
  } else {
    b.adapt("this build has no --threads: it picks its own thread count");
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

// The planned piece that sets option `spec`, to catch extra arguments that override it;
// nullptr when the plan does not set it.
const ArgvPiece* planned_piece(const ServerCommand& out, const server::ServerFlags& flags,
                               const server::FlagSpec* spec) {
  for (const auto& piece : out.pieces) {
    if (flags.find(piece.args.front()) == spec) {
      return &piece;
    }
  }
  return nullptr;
}

// "extra argument -fa overrides the planned -fa on (flash attention on, as in the tuned
// configuration [K9]), …; use launch's own --flash-attn instead".
std::string override_refusal(const std::string& arg, const ArgvPiece& piece) {
  const LaunchRule* rule = find_launch_rule(piece.rule);
  std::string why;
  if (rule != nullptr) {
    why = rule->fact.empty() ? fmt::format(" ({})", rule->why)
                             : fmt::format(" ({} [{}])", rule->why, rule->fact);
  }
  return fmt::format(
      "extra argument {} overrides the planned {}{}, and the memory plan would not know; {}", arg,
      fmt::join(piece.args, " "), why,
      rule != nullptr && !rule->option.empty()
          ? fmt::format("use launch's own {} instead", rule->option)
          : std::string("set it through launch's own options instead"));
}

void add_extra_args(Builder& b, const std::vector<std::string>& extra,
                    const server::ServerFlags& flags) {
  if (extra.empty()) {
    return;
  }
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
    } else if (const ArgvPiece* piece = planned_piece(b.out(), flags, spec)) {
      b.refuse(override_refusal(arg, *piece));
    } else if (const MemoryOption* memory = find_memory_option(spec->key())) {
      b.refuse(fmt::format("extra argument {} {}; {}", arg, memory_option_reason(*memory),
                           memory->own_option.empty() ? "drop it" : "give it there instead"));
    }
  }
  b.add("extra-arguments", extra);
}

}  // namespace

const std::vector<LaunchRule>& launch_rules() {
  static const std::vector<LaunchRule> rules = {
      {"model", "", "the model file", "--model"},
      {"all-layers-on-gpu", "K1",
       "every layer on the GPU: the device path reads ~46% faster "
       "than the managed path and 3x the CPU",
       "--gpu-layers"},
      {"context", "K17", "context of all slots together: ctx_per_slot x slots",
       "--ctx-size or --ctx-per-slot"},
      {"slots", "K10", "parallel slots: serialize for latency, several for throughput", "--slots"},
      {"flash-attention", "K9", "flash attention on, as in the tuned configuration",
       "--flash-attn"},
      {"mtp-when-model-has-head", "K4",
       "draft-mtp speculative decoding: the model has an MTP "
       "head",
       "--mtp or --no-mtp"},
      {"draft-n-max-4", "K4", "4 drafted tokens: mean accepted length 2.88 → 3.70, +15.6%",
       "--draft-n-max"},
      {"draft-p-min", "K4", "the lowest probability a drafted token may have", "--draft-p-min"},
      {"kvu-with-cache-ram", "K8",
       "one unified KV pool and a prompt cache large enough to "
       "keep a full slot's state",
       "--kvu, --no-kvu or --cache-ram"},
      {"templates", "K17", "jinja chat templates", ""},
      {"listen", "", "address and port", "--host or --port"},
      {"projector", "K14", "the multimodal projector beside the model", "--mmproj"},
      {"projector-on-cpu", "", "the projector kept in host memory (mmproj_offload false)",
       "--no-mmproj-offload"},
      {"cache-types", "", "KV cache types other than f16", "--cache-type-k or --cache-type-v"},
      {"batch", "", "physical batch size other than 512", "--ubatch"},
      {"threads", "", "CPU threads other than llama.cpp's default", "--threads"},
      {"swa-full", "", "full-size cache for sliding-window layers", "--swa-full"},
      {"no-mmap-on-gb10", "K19", "no mmap loading on GB10 (224 s vs 22 s)", ""},
      {"extra-arguments", "", "given after --, passed as they are", ""},
  };
  return rules;
}

const LaunchRule* find_launch_rule(std::string_view id) {
  const auto& rules = launch_rules();
  const auto found = std::find_if(rules.begin(), rules.end(),
                                  [&](const LaunchRule& rule) { return rule.id == id; });
  return found == rules.end() ? nullptr : &*found;
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
  // llama-server caps a slot at the training context ("the slot context exceeds the training
  // context of the model - capping"): a larger one is cache no slot can use.
  if (model.context_length > 0 && per_slot > model.context_length) {
    b.out().context_capped = fmt::format(
        "context per slot {} → {}: the model was trained to {} tokens and llama-server caps a "
        "slot there, so the cells past it would never be used",
        per_slot, model.context_length, model.context_length);
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
  add_threads(b, s);
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

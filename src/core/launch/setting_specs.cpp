#include "gb10tune/launch/setting_specs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "gb10tune/launch/profile.hpp"

namespace gb10tune::launch {

namespace {

using nlohmann::json;

// A setting's value as --help shows it: text as it is, anything else as JSON.
std::string shown(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

// function-length: data table
const std::vector<SettingSpec>& launch_setting_specs() {
  using K = SettingKind;
  static const std::vector<SettingSpec> specs = {
      {.key = "models_dir",
       .built_in = "~/models",
       .help = "folder with the model's GGUF file",
       .option = "--models-dir",
       .value_text = "DIR"},
      {.key = "model",
       .built_in = "",
       .help = "the model's GGUF file (default: the one main *.gguf in --models-dir)",
       .option = "--model,-m",
       .value_text = "FILE"},
      {.key = "mmproj",
       .built_in = "auto",
       .help = "projector: auto (the one *mmproj*.gguf beside the model), none, or a GGUF file",
       .option = "--mmproj",
       .value_text = "FILE",
       .flags = {{"--no-mmproj", "none", "No projector, even if one is there"}}},
      {.key = "mmproj_offload",
       .kind = K::boolean,
       .built_in = true,
       .help = "the projector's weights and compute buffer on the GPU (false: "
               "--no-mmproj-offload)",
       .flags = {{"--no-mmproj-offload", false,
                  "Keep the projector's weights and compute buffer in host memory (llama-server "
                  "--no-mmproj-offload)"}}},
      {.key = "llama_server",
       .built_in = "llama-server",
       .help = "the llama-server binary (a name is looked up in PATH)",
       .option = "--llama-server",
       .value_text = "PATH"},
      {.key = "slots",
       .kind = K::integer,
       .built_in = 1,
       .min = 1,
       .max = 256,
       .help = "parallel slots (-np)",
       .option = "--slots",
       .value_text = "N"},
      {.key = "ctx_per_slot",
       .kind = K::integer,
       .built_in = 0,
       .min = 0,
       .max = 1 << 24,
       .help = "context tokens per slot (-c = this x slots; 0 = the model's native context)",
       .option = "--ctx-per-slot",
       .value_text = "N"},
      {.key = "gpu_layers",
       .built_in = "all",
       .help = "layers on the GPU: all, or a number (-ngl)",
       .option = "--gpu-layers",
       .value_text = "all|N"},
      {.key = "flash_attn",
       .built_in = "on",
       .choices = {"on", "off", "auto"},
       .help = "flash attention (-fa)",
       .option = "--flash-attn"},
      {.key = "mtp",
       .built_in = "auto",
       .choices = {"auto", "on", "off"},
       .help = "draft-mtp speculative decoding: auto = when the model has an MTP head (K4)",
       .flags = {{"--mtp", "on", "draft-mtp speculative decoding"},
                 {"--no-mtp", "off", "No speculative decoding"}}},
      {.key = "draft_n_max",
       .kind = K::integer,
       .built_in = 4,
       .min = 1,
       .max = 64,
       .help = "drafted tokens with MTP (--spec-draft-n-max, K4)",
       .option = "--draft-n-max",
       .value_text = "N"},
      {.key = "draft_p_min",
       .kind = K::number,
       .built_in = 0.0,
       .number_min = 0,
       .number_max = 1,
       .help = "the lowest probability a drafted token may have with MTP (--spec-draft-p-min; 0 = "
               "llama.cpp's default, no option)",
       .option = "--draft-p-min",
       .value_text = "P"},
      {.key = "kv_unified",
       .built_in = "auto",
       .choices = {"auto", "on", "off"},
       .help = "one KV pool for all slots (-kvu): auto = on with several slots (K8)",
       .flags = {{"--kvu", "on", "One KV pool for all slots (-kvu)"},
                 {"--no-kvu", "off", "One KV stream per slot"}}},
      {.key = "cache_ram_mib",
       .kind = K::integer,
       .built_in = 8192,
       .min = -1,
       .max = 1 << 30,
       .help = "prompt cache limit in MiB (--cache-ram; -1 = no limit, 0 = off)",
       .option = "--cache-ram",
       .value_text = "MIB"},
      {.key = "cache_type_k",
       .built_in = "f16",
       .help = "K cache type (-ctk)",
       .option = "--cache-type-k",
       .value_text = "TYPE"},
      {.key = "cache_type_v",
       .built_in = "f16",
       .help = "V cache type (-ctv)",
       .option = "--cache-type-v",
       .value_text = "TYPE"},
      {.key = "swa_full",
       .kind = K::boolean,
       .built_in = false,
       .help = "full-size cache for sliding-window layers",
       .flags = {{"--swa-full", true, "Full-size sliding-window cache"}}},
      {.key = "ubatch",
       .kind = K::integer,
       .built_in = 512,
       .min = 1,
       .max = 1 << 20,
       .help = "physical batch size (-ub)",
       .option = "--ubatch",
       .value_text = "N"},
      {.key = "threads",
       .kind = K::integer,
       .built_in = 0,
       .min = 0,
       .max = 4096,
       .help = "CPU threads for generation (--threads; 0 = llama.cpp's default, no option)",
       .option = "--threads",
       .value_text = "N"},
      {.key = "jinja",
       .kind = K::boolean,
       .built_in = true,
       .help = "jinja chat templates (--jinja)"},
      {.key = "host",
       .built_in = "127.0.0.1",
       .help = "address to listen on (--host)",
       .option = "--host",
       .value_text = "ADDRESS"},
      {.key = "port",
       .kind = K::integer,
       .built_in = 8080,
       .min = 1,
       .max = 65535,
       .help = "port to listen on (--port)",
       .option = "--port",
       .value_text = "PORT"},
      {.key = "reserve",
       .built_in = "12GB",
       .help = "memory kept for the system (K13)",
       .option = "--reserve",
       .value_text = "SIZE"},
      {.key = "gpu_reserve",
       .built_in = "1GiB",
       .help = "memory kept free on each discrete GPU, as llama.cpp's own fit",
       .option = "--gpu-reserve",
       .value_text = "SIZE"},
      {.key = "rpc_reserve",
       .built_in = "1GiB",
       .help = "memory kept free on each RPC worker, as llama.cpp's own fit",
       .option = "--rpc-reserve",
       .value_text = "SIZE"},
      {.key = "overhead",
       .built_in = "32MiB",
       .help = "extra margin above the modelled buffers (with --force, an unsupported "
               "architecture's whole estimate beyond its weights)",
       .option = "--overhead",
       .value_text = "SIZE"},
      {.key = "fit",
       .built_in = "auto",
       .choices = {"auto", "on", "off"},
       .help = "when the plan does not fit: auto = lower what the command line did not set, on = "
               "lower any of fit_priority's settings, off = refuse (exit 3)",
       .flags = {{"--fit", "on",
                  "Lower context per slot, slots and prompt cache (in fit_priority order) until "
                  "the plan fits; without it only what the command line did not set is lowered"},
                 {"--no-fit", "off",
                  "Refuse (exit 3) instead of lowering anything when the plan does not fit"}}},
      {.key = "fit_priority",
       .kind = K::text_list,
       .built_in = json::array({"ctx_per_slot", "slots", "cache_ram_mib"}),
       .choices = {"ctx_per_slot", "slots", "cache_ram_mib"},
       .help = "what the fit keeps largest, most important first"},
      {.key = "timeout_s",
       .kind = K::integer,
       .built_in = 600,
       .min = 1,
       .max = 86400,
       .help = "seconds to wait for /health; restarts while the log shows loading progress",
       .option = "--timeout",
       .value_text = "SECONDS"},
      {.key = "extra_args",
       .kind = K::text_list,
       .built_in = json::array(),
       .help = "further llama-server arguments, appended as given"},
  };
  return specs;
}

const SettingSpec* find_setting_spec(std::string_view key) {
  const auto& specs = launch_setting_specs();
  const auto it =
      std::find_if(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.key == key; });
  return it == specs.end() ? nullptr : &*it;
}

std::string setting_option(std::string_view key) {
  if (const SettingSpec* spec = find_setting_spec(key)) {
    if (!spec->option.empty()) {
      return std::string(spec->option.substr(0, spec->option.find(',')));
    }
    if (!spec->flags.empty()) {
      std::vector<std::string_view> names;
      for (const SettingFlag& flag : spec->flags) {
        names.push_back(flag.name);
      }
      return fmt::format("{}", fmt::join(names, "/"));
    }
  }
  std::string option = "--" + std::string(key);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

std::string setting_help(const SettingSpec& spec) {
  std::string help(spec.help);
  if (!help.empty()) {
    help.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(help.front())));
  }
  std::vector<std::string> notes;
  if (!(spec.built_in.is_string() && spec.built_in.get<std::string>().empty())) {
    notes.push_back("default " + shown(spec.built_in));
  }
  std::vector<std::string> profiles;
  for (const auto& [name, text] : builtin_profiles()) {
    const auto profile = parse_settings_document(text, "profile " + name);
    if (profile && profile->settings.contains(std::string(spec.key))) {
      profiles.push_back(name + " " + shown(profile->settings[std::string(spec.key)]));
    }
  }
  if (!profiles.empty()) {
    notes.push_back(fmt::format("profiles: {}", fmt::join(profiles, ", ")));
  }
  if (spec.kind == SettingKind::integer) {
    notes.push_back(fmt::format("{} to {}", spec.min, spec.max));
  } else if (spec.kind == SettingKind::number) {
    notes.push_back(fmt::format("{} to {}", spec.number_min, spec.number_max));
  }
  return notes.empty() ? help : fmt::format("{} [{}]", help, fmt::join(notes, "; "));
}

std::string setting_value_text(const SettingSpec& spec) {
  return spec.value_text.empty() ? fmt::format("{}", fmt::join(spec.choices, "|"))
                                 : std::string(spec.value_text);
}

}  // namespace gb10tune::launch

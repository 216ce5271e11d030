#include "gb10tune/launch/profile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "gb10tune/util/strings.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::launch {

namespace {

using nlohmann::json;

// 1-based line and column of byte `offset` in `text`.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

const SettingSpec* find_spec(std::string_view key) {
  const auto& specs = launch_setting_specs();
  const auto it =
      std::find_if(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.key == key; });
  return it == specs.end() ? nullptr : &*it;
}

std::string known_keys() {
  std::string out;
  for (const auto& spec : launch_setting_specs()) {
    out += (out.empty() ? "" : ", ") + std::string(spec.key);
  }
  return out;
}

}  // namespace

const std::vector<SettingSpec>& launch_setting_specs() {
  using K = SettingKind;
  static const std::vector<SettingSpec> specs = {
      {"models_dir",
       K::text,
       "~/models",
       {},
       0,
       0,
       "folder with the model's GGUF file",
       "--models-dir",
       "DIR"},
      {"model",
       K::text,
       "",
       {},
       0,
       0,
       "the model's GGUF file (default: the one main *.gguf in --models-dir)",
       "--model,-m",
       "FILE"},
      {"mmproj",
       K::text,
       "auto",
       {},
       0,
       0,
       "projector: auto (the one *mmproj*.gguf beside the model), none, or a GGUF file",
       "--mmproj",
       "FILE"},
      {"mmproj_offload",
       K::boolean,
       true,
       {},
       0,
       0,
       "the projector's weights and compute buffer on the GPU (false: --no-mmproj-offload)"},
      {"llama_server",
       K::text,
       "llama-server",
       {},
       0,
       0,
       "the llama-server binary (a name is looked up in PATH)",
       "--llama-server",
       "PATH"},
      {"slots", K::integer, 1, {}, 1, 256, "parallel slots (-np)", "--slots", "N"},
      {"ctx_per_slot",
       K::integer,
       0,
       {},
       0,
       1 << 24,
       "context tokens per slot (-c = this x slots; 0 = the model's native context)",
       "--ctx-per-slot",
       "N"},
      {"gpu_layers",
       K::text,
       "all",
       {},
       0,
       0,
       "layers on the GPU: all, or a number (-ngl)",
       "--gpu-layers",
       "all|N"},
      {"flash_attn",
       K::text,
       "on",
       {"on", "off", "auto"},
       0,
       0,
       "flash attention (-fa)",
       "--flash-attn"},
      {"mtp",
       K::text,
       "auto",
       {"auto", "on", "off"},
       0,
       0,
       "draft-mtp speculative decoding: auto = when the model has an MTP head (K4)"},
      {"draft_n_max",
       K::integer,
       4,
       {},
       1,
       64,
       "drafted tokens with MTP (--spec-draft-n-max, K4)",
       "--draft-n-max",
       "N"},
      {"kv_unified",
       K::text,
       "auto",
       {"auto", "on", "off"},
       0,
       0,
       "one KV pool for all slots (-kvu): auto = on with several slots (K8)"},
      {"cache_ram_mib",
       K::integer,
       8192,
       {},
       -1,
       1 << 30,
       "prompt cache limit in MiB (--cache-ram; -1 = no limit, 0 = off)",
       "--cache-ram",
       "MIB"},
      {"cache_type_k", K::text, "f16", {}, 0, 0, "K cache type (-ctk)", "--cache-type-k", "TYPE"},
      {"cache_type_v", K::text, "f16", {}, 0, 0, "V cache type (-ctv)", "--cache-type-v", "TYPE"},
      {"swa_full", K::boolean, false, {}, 0, 0, "full-size cache for sliding-window layers"},
      {"ubatch", K::integer, 512, {}, 1, 1 << 20, "physical batch size (-ub)", "--ubatch", "N"},
      {"jinja", K::boolean, true, {}, 0, 0, "jinja chat templates (--jinja)"},
      {"host",
       K::text,
       "127.0.0.1",
       {},
       0,
       0,
       "address to listen on (--host)",
       "--host",
       "ADDRESS"},
      {"port", K::integer, 8080, {}, 1, 65535, "port to listen on (--port)", "--port", "PORT"},
      {"reserve",
       K::text,
       "12GB",
       {},
       0,
       0,
       "memory kept for the system (K13)",
       "--reserve",
       "SIZE"},
      {"overhead",
       K::text,
       "32MiB",
       {},
       0,
       0,
       "extra margin above the modelled buffers (with --force, an unsupported architecture's "
       "whole estimate beyond its weights)",
       "--overhead",
       "SIZE"},
      {"fit",
       K::text,
       "auto",
       {"auto", "on", "off"},
       0,
       0,
       "when the plan does not fit: auto = lower what the command line did not set, on = lower "
       "any of fit_priority's settings, off = refuse (exit 3)"},
      {"fit_priority",
       K::text_list,
       json::array({"ctx_per_slot", "slots", "cache_ram_mib"}),
       {"ctx_per_slot", "slots", "cache_ram_mib"},
       0,
       0,
       "what the fit keeps largest, most important first"},
      {"timeout_s",
       K::integer,
       600,
       {},
       1,
       86400,
       "seconds to wait for /health; restarts while the log shows loading progress",
       "--timeout",
       "SECONDS"},
      {"extra_args",
       K::text_list,
       json::array(),
       {},
       0,
       0,
       "further llama-server arguments, appended as given"},
  };
  return specs;
}

namespace {

// A setting's value as --help shows it: text as it is, anything else as JSON.
std::string shown(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

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
  }
  return notes.empty() ? help : fmt::format("{} [{}]", help, fmt::join(notes, "; "));
}

std::string setting_value_text(const SettingSpec& spec) {
  return spec.value_text.empty() ? fmt::format("{}", fmt::join(spec.choices, "|"))
                                 : std::string(spec.value_text);
}

Status check_setting(std::string_view key, const json& value, const std::string& source) {
  const auto* spec = find_spec(key);
  if (spec == nullptr) {
    return Error{fmt::format("{}: '{}' is not a launch setting; known settings: {}", source, key,
                             known_keys()),
                 ExitCode::usage};
  }
  const auto wrong = [&](std::string_view wanted) {
    return Error{
        fmt::format("{}: setting '{}' must be {} (got {})", source, key, wanted, value.dump()),
        ExitCode::usage};
  };
  switch (spec->kind) {
    case SettingKind::text:
      // gpu_layers: "all" or a layer count, as a number or as text.
      if (key == "gpu_layers") {
        constexpr std::int64_t kMaxLayers = 65535;
        const auto wanted = fmt::format("'all' or a whole number from 0 to {}", kMaxLayers);
        if (value.is_number_integer()) {
          const auto n = value.get<std::int64_t>();
          return n >= 0 && n <= kMaxLayers ? Status{} : wrong(wanted);
        }
        if (!value.is_string()) {
          return wrong(wanted);
        }
        const std::string text = value.get<std::string>();
        if (text == "all") {
          return {};
        }
        const auto n = parse_u64(text);
        return n && *n <= static_cast<std::uint64_t>(kMaxLayers) ? Status{} : wrong(wanted);
      }
      if (!value.is_string()) {
        return wrong("a string");
      }
      if (!spec->choices.empty() && std::find(spec->choices.begin(), spec->choices.end(),
                                              value.get<std::string>()) == spec->choices.end()) {
        std::string choices;
        for (const auto c : spec->choices) {
          choices += (choices.empty() ? "" : ", ") + std::string(c);
        }
        return wrong("one of " + choices);
      }
      return {};
    case SettingKind::integer:
      if (!value.is_number_integer()) {
        return wrong("an integer");
      }
      if (value.get<std::int64_t>() < spec->min || value.get<std::int64_t>() > spec->max) {
        return wrong(fmt::format("between {} and {}", spec->min, spec->max));
      }
      return {};
    case SettingKind::boolean:
      return value.is_boolean() ? Status{} : wrong("true or false");
    case SettingKind::text_list:
      if (!value.is_array() ||
          !std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); })) {
        return wrong("an array of strings");
      }
      for (std::size_t i = 0; i < value.size() && !spec->choices.empty(); ++i) {
        const auto item = value[i].get<std::string>();
        const bool known =
            std::find(spec->choices.begin(), spec->choices.end(), item) != spec->choices.end();
        bool repeated = false;
        for (std::size_t j = 0; j < i; ++j) {
          repeated = repeated || value[j].get<std::string>() == item;
        }
        if (!known || repeated) {
          std::string choices;
          for (const auto c : spec->choices) {
            choices += (choices.empty() ? "" : ", ") + std::string(c);
          }
          return wrong("an array of distinct names among " + choices);
        }
      }
      return {};
  }
  return {};
}

Expected<SettingsDocument> parse_settings_document(std::string_view text,
                                                   const std::string& source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    if (const auto colon = what.rfind(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    return Error{fmt::format("{}:{}:{}: not valid JSON: {}", source, line, column, what),
                 ExitCode::usage};
  }
  if (!doc.is_object()) {
    return Error{fmt::format("{}: must be a JSON object with a \"settings\" object", source),
                 ExitCode::usage};
  }
  SettingsDocument out;
  for (const auto& [key, value] : doc.items()) {
    if (key == "description" && value.is_string()) {
      out.description = value.get<std::string>();
    } else if (key == "profile" && value.is_string()) {
      out.profile = value.get<std::string>();
    } else if (key == "settings" && value.is_object()) {
      for (const auto& [name, setting] : value.items()) {
        if (auto ok = check_setting(name, setting, source); !ok) {
          return ok.error();
        }
      }
      out.settings = value;
    } else {
      return Error{fmt::format("{}: unexpected top-level key '{}' (a settings file holds "
                               "\"description\" and \"profile\" strings and a \"settings\" "
                               "object)",
                               source, key),
                   ExitCode::usage};
    }
  }
  return out;
}

LaunchSettings LaunchSettings::resolve(const std::vector<SettingsLayer>& layers) {
  LaunchSettings out;
  for (const auto& spec : launch_setting_specs()) {
    ResolvedSetting resolved{spec.built_in, "built-in", {}};
    for (const auto& layer : layers) {
      const auto it = layer.values.find(std::string(spec.key));
      if (it == layer.values.end()) {
        continue;
      }
      resolved.overridden.emplace_back(resolved.source, resolved.value);
      resolved.value = *it;
      resolved.source = layer.source;
    }
    out.m_values.emplace_back(std::string(spec.key), std::move(resolved));
  }
  return out;
}

const ResolvedSetting& LaunchSettings::at(std::string_view key) const {
  for (const auto& [name, value] : m_values) {
    if (name == key) {
      return value;
    }
  }
  throw std::logic_error(fmt::format("no launch setting '{}'", key));  // a bug, not input
}

std::string LaunchSettings::text(std::string_view key) const {
  const auto& v = at(key).value;
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::int64_t LaunchSettings::integer(std::string_view key) const {
  return at(key).value.get<std::int64_t>();
}

bool LaunchSettings::boolean(std::string_view key) const {
  return at(key).value.get<bool>();
}

std::vector<std::string> LaunchSettings::text_list(std::string_view key) const {
  return at(key).value.get<std::vector<std::string>>();
}

Expected<SettingsDocument> load_profile(const std::string& name_or_path) {
  const auto& shipped = builtin_profiles();
  if (const auto it = shipped.find(name_or_path); it != shipped.end()) {
    return parse_settings_document(it->second, "profile " + name_or_path);
  }
  if (name_or_path.find('/') == std::string::npos &&
      name_or_path.find(".json") == std::string::npos) {
    std::string names;
    for (const auto& [name, text] : shipped) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return Error{fmt::format("no profile named '{}'; the shipped profiles are {} (or give a "
                             "path to a JSON file)",
                             name_or_path, names),
                 ExitCode::usage};
  }
  const auto text = read_text_file(name_or_path);
  if (!text) {
    return Error{fmt::format("profile {}: cannot be read; check the path", name_or_path),
                 ExitCode::usage};
  }
  return parse_settings_document(*text, name_or_path);
}

}  // namespace gb10tune::launch

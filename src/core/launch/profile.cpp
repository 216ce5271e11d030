#include "gb10tune/launch/profile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

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

std::string known_keys() {
  std::string out;
  for (const auto& spec : launch_setting_specs()) {
    out += (out.empty() ? "" : ", ") + std::string(spec.key);
  }
  return out;
}

}  // namespace

Status check_setting(std::string_view key, const json& value, const std::string& source) {
  const auto* spec = find_setting_spec(key);
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
    case SettingKind::number: {
      const auto range = fmt::format("a number from {} to {}", spec->number_min, spec->number_max);
      if (!value.is_number()) {
        return wrong(range);
      }
      const double number = value.get<double>();
      return std::isfinite(number) && number >= spec->number_min && number <= spec->number_max
                 ? Status{}
                 : wrong(range);
    }
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
    } else if (key == "tuned" && value.is_object()) {
      out.tuned = value;
    } else {
      return Error{fmt::format("{}: unexpected top-level key '{}' (a settings file holds "
                               "\"description\" and \"profile\" strings, a \"settings\" "
                               "object and, when gb10tune tune wrote it, a \"tuned\" object)",
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

double LaunchSettings::number(std::string_view key) const {
  return at(key).value.get<double>();
}

bool LaunchSettings::boolean(std::string_view key) const {
  return at(key).value.get<bool>();
}

std::vector<std::string> LaunchSettings::text_list(std::string_view key) const {
  return at(key).value.get<std::vector<std::string>>();
}

std::vector<std::string> user_profile_names(const std::filesystem::path& user_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (user_dir.empty() || !std::filesystem::is_directory(user_dir, ec)) {
    return names;
  }
  for (const auto& entry : std::filesystem::directory_iterator(user_dir, ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> shadowed_profile_note(const std::string& name,
                                                 const std::filesystem::path& user_dir) {
  std::error_code ec;
  const auto path = user_dir / (name + ".json");
  if (user_dir.empty() || builtin_profiles().count(name) == 0 ||
      !std::filesystem::exists(path, ec)) {
    return std::nullopt;
  }
  return fmt::format(
      "profile {} is the shipped one; your {} of the same name is not used (a "
      "shipped name comes first): rename it, or give its path",
      name, path.string());
}

Expected<SettingsDocument> load_profile(const std::string& name_or_path,
                                        const std::filesystem::path& user_dir) {
  const auto& shipped = builtin_profiles();
  if (const auto it = shipped.find(name_or_path); it != shipped.end()) {
    return parse_settings_document(it->second, "profile " + name_or_path);
  }
  std::filesystem::path path = name_or_path;
  if (name_or_path.find('/') == std::string::npos &&
      name_or_path.find(".json") == std::string::npos) {
    std::error_code ec;
    path = user_dir / (name_or_path + ".json");
    if (user_dir.empty() || !std::filesystem::exists(path, ec)) {
      std::vector<std::string> names;
      for (const auto& [name, text] : shipped) {
        names.push_back(name);
      }
      const auto yours = user_profile_names(user_dir);
      return Error{
          fmt::format("no profile named '{}'; the shipped profiles are {}, and yours ({}) {} (or "
                      "give a path to a JSON file)",
                      name_or_path, fmt::join(names, ", "),
                      user_dir.empty() ? std::string("no profile folder") : user_dir.string(),
                      yours.empty() ? std::string("are none yet: `gb10tune tune` saves its "
                                                  "winner there")
                                    : fmt::format("are {}", fmt::join(yours, ", "))),
          ExitCode::usage};
    }
  }
  const auto text = read_text_file(path);
  if (!text) {
    return Error{fmt::format("profile {}: cannot be read; check the path", path.string()),
                 ExitCode::usage};
  }
  return parse_settings_document(*text, path.string());
}

}  // namespace gb10tune::launch

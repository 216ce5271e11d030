#include "gb10tune/bench/run_settings.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::bench {

namespace {

std::string scalar_text(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void flatten(const nlohmann::json& value, const std::string& prefix, RunSettings& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      flatten(child, prefix + "." + key, out);
    }
    return;
  }
  out[prefix] = scalar_text(value);
}

bool is_number(std::string_view word) {
  if (word.empty()) {
    return false;
  }
  char* end = nullptr;
  const std::string text(word);
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool has_prefix(const RunSettings& settings, std::string_view prefix) {
  for (const auto& [key, value] : settings) {
    if (starts_with(key, prefix)) {
      return true;
    }
  }
  return false;
}

}  // namespace

RunSettings settings_from_props(const nlohmann::json& props) {
  RunSettings out;
  if (!props.is_object()) {
    return out;
  }
  if (const auto it = props.find("model_path"); it != props.end() && it->is_string()) {
    out["model"] = it->get<std::string>();
  }
  if (const auto it = props.find("build_info"); it != props.end() && it->is_string()) {
    out["build"] = it->get<std::string>();
  }
  if (const auto it = props.find("total_slots"); it != props.end() && it->is_number()) {
    out["props:total_slots"] = scalar_text(*it);
  }
  const auto defaults = props.find("default_generation_settings");
  if (defaults != props.end() && defaults->is_object()) {
    if (const auto n_ctx = defaults->find("n_ctx"); n_ctx != defaults->end()) {
      out["props:n_ctx"] = scalar_text(*n_ctx);
    }
    if (const auto params = defaults->find("params");
        params != defaults->end() && params->is_object()) {
      flatten(*params, "props:params", out);
      // 3f545be shows the request default ("none") here whatever the server runs; what it
      // runs is "spec-type" (settings_from_speculative).
      out.erase("props:params.speculative.types");
    }
  }
  return out;
}

RunSettings settings_from_argv(const std::vector<std::string>& argv) {
  RunSettings out;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (!starts_with(word, "-") || is_number(word)) {
      continue;  // a stray positional word: nothing to key it by
    }
    std::string flag = word;
    std::string value = "on";
    if (const auto eq = word.find('='); starts_with(word, "--") && eq != std::string::npos) {
      flag = word.substr(0, eq);
      value = word.substr(eq + 1);
    } else if (i + 1 < argv.size() && (!starts_with(argv[i + 1], "-") || is_number(argv[i + 1]))) {
      value = argv[++i];
    }
    if (flag == "-m" || flag == "--model") {
      continue;
    }
    out["argv:" + flag] = value;
  }
  return out;
}

SpeculativeSetting resolve_speculative(std::size_t slots_reported, std::size_t slots_speculative,
                                       const std::vector<std::string>* launch_argv,
                                       std::string_view argv_source) {
  SpeculativeSetting out;
  std::vector<std::string> sources;
  std::optional<bool> planned;
  std::string planned_type;
  std::optional<std::uint32_t> planned_n_max;
  if (launch_argv != nullptr) {
    const RunSettings argv = settings_from_argv(*launch_argv);
    const auto type = argv.find("argv:--spec-type");
    planned_type = type == argv.end() ? "none" : type->second;
    planned = planned_type != "none" && !planned_type.empty();
    if (*planned) {
      planned_n_max = 3;  // llama.cpp's default
      const auto n_max = argv.find("argv:--spec-draft-n-max");
      if (n_max != argv.end()) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(n_max->second.c_str(), &end, 10);
        if (end != n_max->second.c_str() && *end == '\0' && n <= 1024) {
          planned_n_max = static_cast<std::uint32_t>(n);
        }
      }
    }
  }
  if (slots_reported > 0) {
    out.on = slots_speculative > 0;
    sources.push_back(fmt::format("/slots: {} of {} slot{} speculative", slots_speculative,
                                  slots_reported, slots_reported == 1 ? "" : "s"));
  }
  if (planned) {
    sources.push_back(*planned ? fmt::format("{}: --spec-type {} --spec-draft-n-max {}",
                                             argv_source, planned_type, *planned_n_max)
                               : fmt::format("{}: no --spec-type", argv_source));
    if (out.on && *out.on != *planned) {
      sources.back() += " (disagrees with /slots, which shows what the server runs)";
    }
  }
  if (!out.on) {
    out.on = planned;
  }
  if (out.on) {
    if (!*out.on) {
      out.type = "none";
    } else if (planned.value_or(false)) {
      out.type = planned_type;
      out.n_max = planned_n_max;
    } else {
      out.type = "on (type not reported)";
    }
  }
  out.source = fmt::format("{}", fmt::join(sources, "; "));
  return out;
}

RunSettings settings_from_speculative(const SpeculativeSetting& spec) {
  RunSettings out;
  if (!spec.type.empty()) {
    out["spec-type"] = spec.type;
  }
  if (spec.n_max) {
    out["spec-draft-n-max"] = std::to_string(*spec.n_max);
  }
  return out;
}

std::string rpc_workers_from_argv(const std::vector<std::string>& argv) {
  std::string workers;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--rpc" && i + 1 < argv.size()) {
      workers = argv[i + 1];
    } else if (starts_with(argv[i], "--rpc=")) {
      workers = argv[i].substr(6);
    }
  }
  return workers;
}

RunSettings settings_from_rpc(const std::string& workers) {
  RunSettings out;
  if (!workers.empty()) {
    out["rpc"] = workers;
  }
  return out;
}

std::vector<SettingDifference> setting_differences(const RunSettings& a, const RunSettings& b) {
  const bool use_argv = has_prefix(a, "argv:") && has_prefix(b, "argv:");
  const std::string_view group = use_argv ? "argv:" : "props:";
  const auto counts = [&](const std::string& key) {
    if (starts_with(key, "argv:--spec-") && a.count("spec-type") != 0 &&
        b.count("spec-type") != 0) {
      return false;  // counted once, as spec-type and spec-draft-n-max
    }
    if (key == "argv:--rpc") {
      return false;  // counted as "rpc" (absent on both sides: no workers, or unknown)
    }
    return key.find(':') == std::string::npos || starts_with(key, group);
  };
  // A draft depth only one side has follows from the spec-type difference.
  const auto follows = [&](const std::string& key) {
    return key == "spec-draft-n-max" && (a.count(key) == 0 || b.count(key) == 0) &&
           a.count("spec-type") != 0 && b.count("spec-type") != 0 &&
           a.at("spec-type") != b.at("spec-type");
  };
  std::set<std::string> keys;
  for (const auto* settings : {&a, &b}) {
    for (const auto& [key, value] : *settings) {
      if (counts(key)) {
        keys.insert(key);
      }
    }
  }
  std::vector<SettingDifference> out;
  for (const std::string& key : keys) {
    if (follows(key)) {
      continue;
    }
    const auto ia = a.find(key);
    const auto ib = b.find(key);
    const std::string va = ia == a.end() ? std::string() : ia->second;
    const std::string vb = ib == b.end() ? std::string() : ib->second;
    if (va != vb || (ia == a.end()) != (ib == b.end())) {
      out.push_back({key, va, vb});
    }
  }
  return out;
}

}  // namespace gb10tune::bench

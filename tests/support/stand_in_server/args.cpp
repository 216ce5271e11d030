// Stand-in llama-server, part 1: which options a build accepts (taken from its --help
// text) and what the command line asks for.
#include <algorithm>
#include <charconv>

#include "stand_in.hpp"

namespace standin {

namespace {

template <class Int>
bool to_int(std::string_view text, Int& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// The usage lines llama-server prints for one option.
std::string usage_of(const gb10tune::server::FlagSpec& spec) {
  std::string names;
  for (const auto* list : {&spec.names, &spec.negative_names}) {
    for (const auto& name : *list) {
      names += (names.empty() ? "" : ", ") + name;
    }
  }
  return names + " " + spec.value_hint + "\n        " + spec.description;
}

// The message llama-server prints when an option's handler rejects it.
std::string handling_error(const std::string& name, const std::string& why,
                           const std::string& usage) {
  return "error while handling argument \"" + name + "\": " + why + "\n\nusage:\n" + usage +
         "\n\nto show complete usage, run with -h";
}

bool truthy(std::string_view value) {
  return value == "1" || value == "true" || value == "on" || value == "enabled";
}

}  // namespace

std::optional<std::string> parse_args(const std::vector<std::string>& argv,
                                      const gb10tune::server::ServerFlags& options,
                                      const std::map<std::string, std::string>& env,
                                      ServerArgs& out) {
  // The LLAMA_ARG_* fallbacks first, so that the command line overrides them.
  std::vector<std::pair<std::string, std::string>> given;
  const std::pair<const char*, const char*> env_names[] = {
      {"LLAMA_ARG_HOST", "--host"},         {"LLAMA_ARG_PORT", "--port"},
      {"LLAMA_ARG_CTX_SIZE", "--ctx-size"}, {"LLAMA_ARG_N_PARALLEL", "--parallel"},
      {"LLAMA_ARG_MODEL", "--model"},       {"LLAMA_ARG_SPEC_TYPE", "--spec-type"},
      {"LLAMA_ARG_ALIAS", "--alias"},       {"LLAMA_ARG_SPEC_DRAFT_N_MAX", "--spec-draft-n-max"},
  };
  for (const auto& [var, option] : env_names) {
    if (const auto it = env.find(var); it != env.end()) {
      given.emplace_back(option, it->second);
    }
  }
  if (const auto it = env.find("LLAMA_ARG_KV_UNIFIED"); it != env.end()) {
    given.emplace_back(truthy(it->second) ? "--kv-unified" : "--no-kv-unified", "");
  }
  if (const auto it = env.find("LLAMA_ARG_ENDPOINT_METRICS"); it != env.end()) {
    if (truthy(it->second)) {
      given.emplace_back("--metrics", "");
    }
  }

  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg.resize(eq);
      }
      std::replace(arg.begin(), arg.end(), '_', '-');
    }
    const auto* spec = options.find(arg);
    if (spec == nullptr || (inline_value && !spec->takes_value())) {
      return "error: invalid argument: " + argv[i];
    }
    std::string value;
    if (spec->takes_value()) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < argv.size()) {
        value = argv[++i];
      } else {
        return std::string("expected value for argument");
      }
    }
    if (spec->removed()) {
      return handling_error(arg, spec->description, usage_of(*spec));
    }
    given.emplace_back(arg, value);
  }

  for (const auto& entry : given) {
    // Plain references: clang 14 cannot capture structured bindings in lambdas.
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    const auto bad_value = [&] {
      const auto* spec = options.find(name);
      return handling_error(name, "invalid value '" + value + "'",
                            spec == nullptr ? name : usage_of(*spec));
    };
    if (name == "-h" || name == "--help" || name == "--usage") {
      out.help = true;
    } else if (name == "--version") {
      out.version = true;
    } else if (name == "--host") {
      out.host = value;
    } else if (name == "--port") {
      if (!to_int(value, out.port) || out.port < 0 || out.port > 65535) {
        return bad_value();
      }
    } else if (name == "-np" || name == "--parallel") {
      if (!to_int(value, out.n_parallel) || out.n_parallel == 0 || out.n_parallel < -1) {
        return bad_value();
      }
    } else if (name == "-c" || name == "--ctx-size") {
      if (!to_int(value, out.ctx_size)) {
        return bad_value();
      }
    } else if (name == "--spec-type") {
      out.spec_type = value;
    } else if (name == "--spec-draft-n-max") {
      if (!to_int(value, out.spec_draft_n_max)) {
        return bad_value();
      }
    } else if (name == "-kvu" || name == "--kv-unified") {
      out.kv_unified = true;
    } else if (name == "-no-kvu" || name == "--no-kv-unified") {
      out.kv_unified = false;
    } else if (name == "-m" || name == "--model") {
      out.model_path = value;
    } else if (name == "-a" || name == "--alias") {
      out.alias = value;
    } else if (name == "--metrics") {
      out.metrics = true;
    }
  }
  return std::nullopt;
}

int total_slots(const ServerArgs& args) {
  return args.n_parallel == -1 ? 4 : args.n_parallel;
}

std::uint64_t slot_context(const ServerArgs& args) {
  const auto pad = [](std::uint64_t value) { return (value + 255) / 256 * 256; };
  const bool unified = args.kv_unified.value_or(args.n_parallel == -1);
  const auto streams = static_cast<std::uint64_t>(unified ? 1 : total_slots(args));
  std::uint64_t per_slot = pad(args.ctx_size == 0 ? args.n_ctx_train * streams : args.ctx_size);
  if (!unified) {
    per_slot = pad(per_slot / streams);
  }
  return std::min(per_slot, args.n_ctx_train);
}

bool speculative(const ServerArgs& args) {
  return !args.spec_type.empty() && args.spec_type != "none" && !args.spec_init_failed;
}

}  // namespace standin

// Stand-in llama-server, part 1: which options a build accepts (taken from its --help
// text) and what the command line asks for.
#include <algorithm>
#include <charconv>

#include "stand_in.hpp"

namespace standin {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The option part of a help line: everything before the description column, with the
// padding after commas ("-c,    --ctx-size") squeezed to one space.
std::string option_header(std::string_view line) {
  std::string squeezed;
  for (std::size_t i = 0; i < line.size(); ++i) {
    squeezed += line[i];
    if (line[i] == ',') {
      while (i + 1 < line.size() && line[i + 1] == ' ') {
        ++i;
      }
      squeezed += ' ';
    }
  }
  const auto description = squeezed.find("  ");
  return std::string(trim(std::string_view(squeezed).substr(0, description)));
}

template <class Int>
bool to_int(std::string_view text, Int& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
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

OptionTable parse_help_options(std::string_view help_text) {
  // Split into lines first: an option's description continues on indented lines.
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < help_text.size();) {
    auto end = help_text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = help_text.size();
    }
    lines.push_back(help_text.substr(pos, end - pos));
    pos = end + 1;
  }
  OptionTable table;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.size() < 2 || line[0] != '-' || line.substr(0, 5) == "-----") {
      continue;
    }
    const std::string header = option_header(line);
    OptionInfo info;
    // Names are separated by ", "; the last one may carry the value placeholder.
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start <= header.size()) {
      const auto comma = header.find(", ", start);
      std::string field =
          header.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const auto space = field.find(' ');
      const bool last = comma == std::string::npos || space != std::string::npos;
      if (space != std::string::npos) {
        info.takes_value = true;
        field.resize(space);
      }
      if (!field.empty() && field[0] == '-') {
        names.push_back(field);
      }
      if (last) {
        break;
      }
      start = comma + 2;
    }
    // The description: the rest of this line (when the header left room) and the indented
    // lines below it, without the "(env: ...)" note.
    std::string description;
    std::string usage(line);
    if (line.size() > 40 && line.substr(0, 40).find("  ") != std::string_view::npos) {
      description = std::string(trim(line.substr(40)));
    }
    while (i + 1 < lines.size() && !lines[i + 1].empty() && lines[i + 1][0] == ' ') {
      const std::string_view more = trim(lines[++i]);
      usage += "\n" + std::string(lines[i]);
      if (more.substr(0, 5) != "(env:") {
        description += (description.empty() ? "" : " ") + std::string(more);
      }
    }
    constexpr std::string_view kRemoved = "the argument has been removed. ";
    if (description.rfind(kRemoved, 0) == 0) {
      info.removed = description.substr(kRemoved.size());
    }
    info.usage = usage;
    for (const std::string& name : names) {
      table[name] = info;
    }
  }
  return table;
}

std::optional<std::string> parse_args(const std::vector<std::string>& argv,
                                      const OptionTable& options,
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
    const auto it = options.find(arg);
    if (it == options.end() || (inline_value && !it->second.takes_value)) {
      return "error: invalid argument: " + argv[i];
    }
    std::string value;
    if (it->second.takes_value) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < argv.size()) {
        value = argv[++i];
      } else {
        return std::string("expected value for argument");
      }
    }
    if (!it->second.removed.empty()) {
      return handling_error(arg, "the argument has been removed. " + it->second.removed,
                            it->second.usage);
    }
    given.emplace_back(arg, value);
  }

  for (const auto& entry : given) {
    // Plain references: clang 14 cannot capture structured bindings in lambdas.
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    const auto bad_value = [&] {
      const auto it = options.find(name);
      return handling_error(name, "invalid value '" + value + "'",
                            it == options.end() ? name : it->second.usage);
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
  const std::uint64_t total = args.ctx_size == 0 ? kTrainContext : args.ctx_size;
  const bool unified = args.kv_unified.value_or(args.n_parallel == -1);
  if (unified) {
    return std::min(total, kTrainContext);
  }
  return total / static_cast<std::uint64_t>(total_slots(args));
}

bool speculative(const ServerArgs& args) {
  return !args.spec_type.empty() && args.spec_type != "none";
}

}  // namespace standin

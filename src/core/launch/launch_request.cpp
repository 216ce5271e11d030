#include "gb10tune/launch/launch_request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/launch/profile.hpp"

namespace gb10tune::launch {

namespace {

// llama-server's projector options given after -- (-mm/--mmproj FILE, --mmproj=FILE,
// --no-mmproj-offload, --mmproj-offload) become launch's own settings, so that the plan counts
// the projector and the command carries it once. An Error when they contradict launch's own
// options.
Status lift_projector_args(LaunchRequest& in) {
  std::vector<std::string> kept;
  const auto set = [&in](const char* key, const char* option, const nlohmann::json& value,
                         const std::string& arg) -> Status {
    if (in.values.contains(key) && in.values[key] != value) {
      return Error{
          fmt::format("{} after -- contradicts launch's own {}; give it once", arg, option),
          ExitCode::usage};
    }
    in.values[key] = value;
    return {};
  };
  for (std::size_t i = 0; i < in.extra.size(); ++i) {
    const std::string& arg = in.extra[i];
    Status status;
    if (arg == "-mm" || arg == "--mmproj") {
      if (i + 1 >= in.extra.size()) {
        return Error{fmt::format("{} after -- needs a file", arg), ExitCode::usage};
      }
      status = set("mmproj", "--mmproj/--no-mmproj", in.extra[i + 1], arg);
      ++i;
    } else if (arg.rfind("--mmproj=", 0) == 0) {
      status = set("mmproj", "--mmproj/--no-mmproj", arg.substr(9), arg);
    } else if (arg == "--no-mmproj-offload" || arg == "--mmproj-offload") {
      status = set("mmproj_offload", "--no-mmproj-offload", arg == "--mmproj-offload", arg);
    } else {
      kept.push_back(arg);
    }
    if (!status) {
      return status;
    }
  }
  in.extra = std::move(kept);
  return {};
}

// llama-server's --rpc after -- becomes launch's own --rpc, so that the workers are contacted
// and planned. An Error when it contradicts launch's own --rpc.
Status lift_rpc_args(LaunchRequest& in) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < in.extra.size(); ++i) {
    const std::string& arg = in.extra[i];
    std::string value;
    if (arg == "--rpc") {
      if (i + 1 >= in.extra.size()) {
        return Error{"--rpc after -- needs HOST:PORT[,HOST:PORT…]", ExitCode::usage};
      }
      value = in.extra[++i];
    } else if (arg.rfind("--rpc=", 0) == 0) {
      value = arg.substr(6);
    } else {
      kept.push_back(arg);
      continue;
    }
    if (!in.rpc.empty() && in.rpc != value) {
      return Error{fmt::format("--rpc {} after -- contradicts launch's own --rpc {}; give it once",
                               value, in.rpc),
                   ExitCode::usage};
    }
    in.rpc = value;
  }
  in.extra = std::move(kept);
  return {};
}

// The command line's values go through the same checks as a profile's or the user config's.
Status check_command_line(const nlohmann::json& values) {
  for (const auto& [key, value] : values.items()) {
    if (auto ok = check_setting(key, value, "command line " + setting_option(key)); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace

Expected<std::vector<rpc::Endpoint>> normalize_request(LaunchRequest& in,
                                                       const platform::Environment& env,
                                                       const NoteSink& note) {
  if (!in.extra.empty() && in.extra.front().rfind('-', 0) != 0) {
    return Error{fmt::format("unexpected argument '{}'; llama-server arguments go after --, e.g. "
                             "gb10tune launch -- --threads 8",
                             in.extra.front()),
                 ExitCode::usage};
  }
  if (auto lifted = lift_projector_args(in); !lifted) {
    return lifted.error();
  }
  if (auto lifted = lift_rpc_args(in); !lifted) {
    return lifted.error();
  }
  // LLAMA_ARG_RPC (K16) would make the server use workers nobody planned: it is taken as --rpc
  // (the command line's --rpc wins, as in llama-server).
  if (const auto from_env = env.get("LLAMA_ARG_RPC"); from_env && !from_env->empty()) {
    if (in.rpc.empty()) {
      in.rpc = *from_env;
      note(NoteKind::info, fmt::format("LLAMA_ARG_RPC={} in the environment: planned as --rpc {}",
                                       *from_env, *from_env));
    }
  }
  std::vector<rpc::Endpoint> endpoints;
  if (!in.rpc.empty()) {
    auto parsed = rpc::parse_endpoint_list(in.rpc);
    if (!parsed) {
      return parsed.error();
    }
    endpoints = std::move(*parsed);
    std::vector<std::string> list;
    for (const auto& e : endpoints) {
      list.push_back(e.to_string());
    }
    in.extra.push_back("--rpc");
    in.extra.push_back(fmt::format("{}", fmt::join(list, ",")));
  }
  if (!in.extra.empty()) {
    in.values["extra_args"] = in.extra;
  }
  if (auto ok = check_command_line(in.values); !ok) {
    return ok.error();
  }
  return endpoints;
}

}  // namespace gb10tune::launch

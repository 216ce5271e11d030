// The re-planning form of `launch --print systemd|llama-swap`: instead of the command fitted when
// the file is written, the supervisor runs `gb10tune launch --foreground` with what the user
// asked, so that the plan and the fit are made again at every start.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/launch/launch_request.hpp"

namespace gb10tune::launch {

// [program, "launch", "--foreground", options…] asking what `request` asks, as the command line
// bound it (before the planner normalizes it): each setting through its own option or the
// switch that sets its value, then --ctx-size, --profile, --backend (unless auto), --rpc and
// --force when given, then "--" and the llama-server arguments. Relative paths (the model, the
// projector, the models folder, llama-server, a profile file) are made absolute against `cwd`,
// since a supervisor starts elsewhere; `server_path` (the llama-server this plan found) is
// pinned with --llama-server when the request names none, since a service's PATH is not the
// shell's. Never fails.
std::vector<std::string> replan_argv(const std::string& program, const LaunchRequest& request,
                                     const std::filesystem::path& cwd,
                                     const std::string& server_path);

// Whether `--print KIND` re-plans when --form is not given: yes for systemd and llama-swap (a
// unit written once outlives the memory, the llama-server build and the model it was fitted
// to); no for a preset (the router runs llama-server itself).
bool replans_by_default(std::string_view kind);

}  // namespace gb10tune::launch

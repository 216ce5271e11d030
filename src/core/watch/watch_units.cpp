#include "gb10tune/watch/watch_units.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/util/systemd_syntax.hpp"

namespace gb10tune::watch {

namespace {

// The Environment= lines of the units: one quoted assignment per variable.
Expected<std::string> units_environment(const WatchUnitsInput& input) {
  std::string out;
  for (const auto& [name, value] : input.environment) {
    const auto assignment = systemd::environment_assignment(name, value);
    if (!assignment) {
      return assignment.error();
    }
    out += fmt::format("Environment={}\n", *assignment);
  }
  return out;
}

}  // namespace

WatchUnitsInput watch_units_input(const std::optional<std::string>& self,
                                  const std::vector<std::string>& watch_options,
                                  int verify_every_min, const platform::Environment& env) {
  WatchUnitsInput input;
  const std::string binary = self.value_or("gb10tune");
  input.watch_argv = {binary, "watch", "--wait"};
  input.watch_argv.insert(input.watch_argv.end(), watch_options.begin(), watch_options.end());
  input.verify_argv = {binary, "verify"};
  input.verify_every_min = verify_every_min;
  for (const char* name : {"XDG_STATE_HOME", "XDG_CONFIG_HOME"}) {
    if (const auto value = env.get(name)) {
      input.environment.emplace_back(name, *value);
    }
  }
  return input;
}

Expected<std::vector<UnitFile>> render_watch_units(const WatchUnitsInput& input) {
  const auto watch_exec = systemd::exec_line(input.watch_argv);
  if (!watch_exec) {
    return watch_exec.error();
  }
  const auto verify_exec = systemd::exec_line(input.verify_argv);
  if (!verify_exec) {
    return verify_exec.error();
  }
  const auto environment = units_environment(input);
  if (!environment) {
    return environment.error();
  }
  std::vector<UnitFile> files;
  files.push_back(
      {"gb10tune-watch.service",
       fmt::format(
           "# Written by gb10tune watch --print systemd. Install as user units (with\n"
           "# gb10tune-verify.service and gb10tune-verify.timer) under ~/.config/systemd/user/,\n"
           "# then: systemctl --user daemon-reload &&\n"
           "#       systemctl --user enable --now gb10tune-watch.service gb10tune-verify.timer\n"
           "# Events go to the journal: journalctl --user -u gb10tune-watch\n"
           "[Unit]\n"
           "Description=gb10tune watch: memory floor for the llama-server gb10tune launch "
           "started\n"
           "After=llama-server.service\n"
           "\n"
           "[Service]\n"
           "Type=exec\n"
           "ExecStart={}\n"
           "{}"
           "Restart=on-failure\n"
           "RestartSec=30\n"
           "# SIGTERM from systemctl stop ends the watch with 143 (SIGINT: 130): a clean stop.\n"
           "SuccessExitStatus=130 143\n"
           "# A server the watch restarted lives in this unit's cgroup: stopping or restarting\n"
           "# the watch must not take it down.\n"
           "KillMode=process\n"
           "\n"
           "[Install]\n"
           "WantedBy=default.target\n",
           *watch_exec, *environment)});
  files.push_back(
      {"gb10tune-verify.service",
       fmt::format(
           "# Written by gb10tune watch --print systemd; started by gb10tune-verify.timer.\n"
           "# A failed check leaves this unit failed: systemctl --user --failed\n"
           "[Unit]\n"
           "Description=gb10tune verify: is the llama-server still on the fast path?\n"
           "\n"
           "[Service]\n"
           "Type=oneshot\n"
           "ExecStart={}\n"
           "{}",
           *verify_exec, *environment)});
  files.push_back(
      {"gb10tune-verify.timer",
       fmt::format("# Written by gb10tune watch --print systemd: gb10tune verify every {} min.\n"
                   "[Unit]\n"
                   "Description=gb10tune verify every {} minutes\n"
                   "\n"
                   "[Timer]\n"
                   "OnBootSec={}min\n"
                   "OnUnitActiveSec={}min\n"
                   "\n"
                   "[Install]\n"
                   "WantedBy=timers.target\n",
                   input.verify_every_min, input.verify_every_min, input.verify_every_min,
                   input.verify_every_min)});
  return files;
}

Status create_unit_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create --unit-dir {}: {}", dir.string(), ec.message()),
                 ExitCode::usage};
  }
  return {};
}

Expected<std::filesystem::path> write_unit_file(const std::filesystem::path& dir,
                                                const UnitFile& file) {
  namespace fs = std::filesystem;
  const fs::path path = dir / file.name;
  if (const Status written = platform::write_file_atomic(path, file.content); !written) {
    return Error{written.error().message, ExitCode::usage};
  }
  std::error_code ec;
  fs::permissions(path,
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read,
                  ec);
  return path;
}

}  // namespace gb10tune::watch

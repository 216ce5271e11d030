// A launch that starts a server: the lock it holds from before the memory check until the
// server is ready, the URL the server is asked on, and the launch record it leaves (what
// verify, stop, watch and bench server read).
#pragma once

#include <optional>
#include <string>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/launch_request.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/render/launch_render.hpp"

namespace gb10tune::launch {

// The launch lock and the state files it guards.
struct LaunchLease {
  StatePaths paths;
  LaunchLock lock;
};

// Takes the launch lock in the private state directory of `env` and checks the pid file
// (under `root`): a server that launch started and that still runs is an Error
// (ExitCode::failed) saying how to stop it, since it holds the memory the plan needs; a stale
// pid file is removed, `note` saying why. The Errors of trust::private_state_dir and
// LaunchLock::acquire.
Expected<LaunchLease> begin_launch(const platform::Environment& env, const platform::Sysroot& root,
                                   const NoteSink& note);

// "http://HOST:PORT" of the host and port settings; a server listening everywhere (in any
// spelling getaddrinfo() reads as such) is asked on the loopback of its family.
std::string launch_url(const LaunchSettings& settings);

// The record of the server started from `preview` (its plan document, the expectations verify
// compares the process with: over RPC the head's own part, and the rules launch chose or
// forced), with its files under `paths`, asked on `url`, started at `launched_at`.
LaunchRecord make_launch_record(const render::LaunchPreview& preview, const StatePaths& paths,
                                const std::string& url, const std::string& launched_at);

// What `launch` says when it started `model_path` without --profile and the user has a tuned
// profile for that model and `build` (the server's build_info): "a tuned profile exists for
// this model and build: NAME (1.12× decode, 2026-12-02); start it with --profile NAME" for the
// newest one; nullopt when there is none.
std::optional<std::string> tuned_profile_note(const platform::Environment& env,
                                              const std::string& model_path,
                                              const std::string& build);

}  // namespace gb10tune::launch

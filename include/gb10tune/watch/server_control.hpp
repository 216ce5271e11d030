// What `gb10tune watch` does to the world outside its samples: reads the pid file, stops the
// recorded server, starts it again in the background, reaps the servers it started and writes
// into a server's log. SystemServerControl does it for real (through launch:: and platform::);
// tests of the supervisor pass a fake.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::watch {

// A start of llama-server under way while the watch samples on.
class PendingStart {
 public:
  virtual ~PendingStart() = default;

  // True once the start has its outcome (result() may be read).
  virtual bool done() const = 0;
  // Asks the start to give up soon: a server it spawned is stopped and the outcome is an Error.
  virtual void abort() = 0;
  // Waits until done().
  virtual void finish() = 0;
  // The outcome (launch::start_server's); only once done().
  virtual const Expected<launch::StartResult>& result() const = 0;
};

// The supervisor's hands.
class ServerControl {
 public:
  virtual ~ServerControl() = default;

  // The pid file and launch record as they are now (launch::check_pid_file). Never fails.
  virtual launch::PidFileStatus pid_file() = 0;
  // Removes a stale pid file and launch record (launch::clear_launch_state).
  virtual void clear_stale() = 0;
  // The launch lock, held while a restart starts so that no launch races it. An Error naming
  // the holder when a launch holds it (launch::LaunchLock::acquire).
  virtual Expected<launch::LaunchLock> lock() = 0;
  // Stops the recorded server as launch::stop_server does, noting "watch" in its log. An Error
  // when nothing recorded runs or it could not be stopped.
  virtual Expected<launch::StopResult> stop(std::chrono::milliseconds grace) = 0;
  // Starts the server of `request` (launch::start_server) without waiting for it. Never null.
  virtual std::unique_ptr<PendingStart> start(launch::StartRequest request) = 0;
  // How `pid`, a server this process started, ended; nullopt while it runs or when it is no
  // child of this process.
  virtual std::optional<platform::ChildExit> reap(int pid) = 0;
  // Appends `line` and a newline to the log at `path` when it can be opened; says nothing
  // otherwise.
  virtual void note_in_log(const std::filesystem::path& path, const std::string& line) = 0;
};

// The real one, for the server recorded under `paths`, with /proc read under `root`.
class SystemServerControl final : public ServerControl {
 public:
  SystemServerControl(platform::Sysroot root, launch::StatePaths paths);

  launch::PidFileStatus pid_file() override;
  void clear_stale() override;
  Expected<launch::LaunchLock> lock() override;
  Expected<launch::StopResult> stop(std::chrono::milliseconds grace) override;
  std::unique_ptr<PendingStart> start(launch::StartRequest request) override;
  std::optional<platform::ChildExit> reap(int pid) override;
  void note_in_log(const std::filesystem::path& path, const std::string& line) override;

 private:
  platform::Sysroot m_root;
  launch::StatePaths m_paths;
};

}  // namespace gb10tune::watch

// Starting a long-lived server detached from the terminal, watching it, and signalling a
// process safely: the only code in gb10tune that sends signals to a server.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// How a child ended.
struct ChildExit {
  int exit_status = -1;        // exit code, -1 when it was killed by a signal
  int signal = 0;              // the terminating signal, 0 when it exited
  bool still_running = false;  // terminate() gave up: SIGKILL did not end it in time
};

// How long terminate() waits for a child to end after SIGKILL.
inline constexpr std::chrono::milliseconds kKillWait{5000};

// A server started by this process, in a session of its own. Not copyable; moving keeps the
// child. The destructor neither signals nor reaps: a started server outlives its starter.
class Child {
 public:
  // Runs argv[0] (an absolute path; never looked up in PATH, never through a shell) with
  // exactly `env` (NAME=VALUE strings), stdin from /dev/null and stdout and stderr both
  // appended to `output_fd` (which stays open here), in a new session (setsid) with default
  // signal dispositions and an empty signal mask. An Error naming argv[0] and the OS reason
  // when it cannot be executed (missing, not executable, bad format).
  static Expected<Child> spawn(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env, int output_fd);

  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() = default;

  int pid() const { return m_pid; }
  // Reaps the child without blocking: its exit once it has ended (then always the same
  // answer), nullopt while it runs.
  std::optional<ChildExit> poll();
  // Sends `signal` unless the child has been reaped already.
  void signal(int signal) const;
  // SIGTERM, up to `grace` for it to end, then SIGKILL and up to `kill_wait` more; reaps it and
  // returns how it ended. A child that even SIGKILL does not end in time (stuck in the kernel:
  // a driver, a dead NFS mount) is left unreaped and reported with `still_running`.
  ChildExit terminate(std::chrono::milliseconds grace,
                      std::chrono::milliseconds kill_wait = kKillWait);

 private:
  explicit Child(int pid) : m_pid(pid) {}
  // Polls until the child is reaped (true) or `deadline` passes (false).
  bool wait_reaped(std::chrono::steady_clock::time_point deadline);
  int m_pid = -1;
  std::optional<ChildExit> m_exit;
};

// A handle on a process that is not necessarily our child (a pidfd where the kernel has them):
// signals sent through it can never reach a later process that reuses the pid. Open it first,
// then check that the process is the expected one, then signal.
class ProcessHandle {
 public:
  // Opens `pid`. An Error when no such process exists (it exited) or it cannot be opened.
  static Expected<ProcessHandle> open(int pid);

  ProcessHandle(ProcessHandle&& other) noexcept;
  ProcessHandle& operator=(ProcessHandle&& other) noexcept;
  ProcessHandle(const ProcessHandle&) = delete;
  ProcessHandle& operator=(const ProcessHandle&) = delete;
  ~ProcessHandle() = default;

  int pid() const { return m_pid; }
  // Sends `signal`. An Error naming the pid when it is not permitted (another user's process);
  // a process that has exited meanwhile is not an error.
  Status signal(int signal) const;
  // Waits up to `timeout` for the process to exit; true once it has (a zombie counts).
  bool wait_exit(std::chrono::milliseconds timeout) const;

 private:
  ProcessHandle(int pid, Fd fd) : m_pid(pid), m_fd(std::move(fd)) {}
  int m_pid = -1;
  Fd m_fd;  // none: no pidfd support, plain kill() and /proc polling
};

// Reaps `pid`, a child of this process that no Child holds any more (a server that
// launch::start_server spawned and left running), without blocking: its exit once it has ended,
// nullopt while it runs or when it is no child of this process (never started here, or reaped
// already).
std::optional<ChildExit> reap_exited_child(int pid);

// The real user id of this process.
unsigned current_uid();

// The process id of this process.
int current_pid();

}  // namespace gb10tune::platform

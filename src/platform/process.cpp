#include "gb10tune/platform/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <thread>

#include "exec_words.hpp"
#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/strings.hpp"

extern char** environ;

namespace gb10tune::platform {

namespace {

using Clock = std::chrono::steady_clock;

// How long a program gets to end after SIGKILL before run_capture gives up on it.
constexpr std::chrono::milliseconds kKillWait{5000};

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<std::int64_t>(left, 0, 1'000'000'000));
}

// Reads what the child writes until the end of its output, a failed poll or read, or the
// deadline; false only at the deadline with the output still open. The end of the output is not
// the end of the program: the caller waits for that separately.
bool drain(int fd, Clock::time_point deadline, std::size_t max_output, std::string& output) {
  char buffer[4096];
  while (true) {
    if (Clock::now() >= deadline) {
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, millis_until(deadline));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready == 0) {
      return false;
    }
    if (ready < 0) {
      return true;  // no more output to be had; the wait for the exit decides
    }
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return true;  // every writer closed its end (or the read failed)
    }
    const std::size_t room = max_output > output.size() ? max_output - output.size() : 0;
    output.append(buffer, std::min(room, static_cast<std::size_t>(got)));
  }
}

enum class Reaped { exited, running, lost };

// Reaps `pid` once it has exited, polling until `deadline`: `exited` with its wait status,
// `running` when it still runs then, `lost` when it is no child of ours any more.
Reaped reap_by(pid_t pid, Clock::time_point deadline, int& status) {
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      return Reaped::exited;
    }
    if (done < 0 && errno != EINTR) {
      return Reaped::lost;
    }
    if (Clock::now() >= deadline) {
      return Reaped::running;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5, millis_until(deadline))));
  }
}

}  // namespace

Expected<CapturedRun> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout, std::size_t max_output) {
  if (argv.empty()) {
    return Error{"internal: run_capture needs a program to run"};
  }
  if (argv[0].find('/') != std::string::npos) {
    if (const int error = detail::executable_error(argv[0]); error != 0) {
      return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(error))};
    }
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Error{fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  write_end.close();
  if (rc != 0) {
    return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(rc))};
  }

  CapturedRun run;
  const auto deadline = Clock::now() + timeout;
  const bool output_ended = drain(read_end.get(), deadline, max_output, run.output);
  int status = 0;
  Reaped reaped = output_ended ? reap_by(pid, deadline, status) : Reaped::running;
  if (reaped == Reaped::running) {
    run.timed_out = true;
    ::kill(-pid, SIGKILL);  // the whole process group: helpers it started go too
    reaped = reap_by(pid, Clock::now() + kKillWait, status);
    if (reaped == Reaped::running) {
      return Error{
          fmt::format("{} (pid {}) ran past its {} and did not end within {} of SIGKILL "
                      "(stuck in the kernel?); it is left behind",
                      argv[0], pid, format_duration(timeout), format_duration(kKillWait))};
    }
  }
  if (reaped == Reaped::exited && WIFEXITED(status)) {
    run.exit_status = WEXITSTATUS(status);
  } else if (reaped == Reaped::exited && WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  return run;
}

}  // namespace gb10tune::platform

#include "gb10tune/platform/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace gb10tune::platform {

namespace {

using Clock = std::chrono::steady_clock;

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return m_fd; }
  void reset() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = -1;
  }

 private:
  int m_fd;
};

// Reads what the child writes until EOF or the deadline; returns false on timeout.
bool drain(int fd, Clock::time_point deadline, std::size_t max_output, std::string& output) {
  char buffer[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return ready == 0 ? false : true;
    }
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return true;  // EOF: every writer closed its end
    }
    const std::size_t room = max_output > output.size() ? max_output - output.size() : 0;
    output.append(buffer, std::min(room, static_cast<std::size_t>(got)));
  }
}

}  // namespace

Expected<CapturedRun> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout, std::size_t max_output) {
  if (argv.empty()) {
    return Error{"internal: run_capture needs a program to run"};
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
  write_end.reset();
  if (rc != 0) {
    return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(rc))};
  }

  CapturedRun run;
  const bool finished = drain(read_end.get(), Clock::now() + timeout, max_output, run.output);
  if (!finished) {
    run.timed_out = true;
    ::kill(-pid, SIGKILL);  // the whole process group: helpers it started go too
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    run.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  return run;
}

}  // namespace gb10tune::platform

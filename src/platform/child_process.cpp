#include "gb10tune/platform/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>
#include <utility>

#include "exec_words.hpp"

namespace gb10tune::platform {

namespace {

using Clock = std::chrono::steady_clock;

ChildExit decode(int status) {
  ChildExit exit;
  if (WIFEXITED(status)) {
    exit.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  }
  return exit;
}

// pidfd_open(2) through syscall(): glibc 2.36 has a wrapper, older ones do not.
int pidfd_open_raw(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

int pidfd_send_signal_raw(int fd, int signal) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, fd, signal, nullptr, 0));
#else
  (void)fd;
  (void)signal;
  errno = ENOSYS;
  return -1;
#endif
}

// waitpid(pid, WNOHANG), retried when a signal interrupts it: pid once reaped (its `status`
// set), 0 while it runs, -1 when it is no child of ours.
pid_t wait_no_hang(int pid, int& status) {
  pid_t done = -1;
  do {
    done = ::waitpid(pid, &status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  return done;
}

}  // namespace

Expected<Child> Child::spawn(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, int output_fd) {
  if (argv.empty() || argv[0].empty() || argv[0].front() != '/') {
    return Error{
        fmt::format("internal: the server must be started from an absolute path, got "
                    "'{}'",
                    argv.empty() ? std::string() : argv[0])};
  }
  if (const int error = detail::executable_error(argv[0]); error != 0) {
    return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(error))};
  }
  std::vector<char*> args = detail::exec_words(argv);
  std::vector<char*> envp = detail::exec_words(env);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Descriptors the caller inherited without close-on-exec (a pipe of the shell that ran
  // gb10tune, say) must not stay open for the server's lifetime.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(rc))};
  }
  return Child(pid);
}

Child::Child(Child&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_exit(std::move(other.m_exit)) {}

Child& Child::operator=(Child&& other) noexcept {
  m_pid = std::exchange(other.m_pid, -1);
  m_exit = std::move(other.m_exit);
  return *this;
}

std::optional<ChildExit> Child::poll() {
  if (m_exit || m_pid <= 0) {
    return m_exit;
  }
  int status = 0;
  const pid_t done = wait_no_hang(m_pid, status);
  if (done == m_pid) {
    m_exit = decode(status);
  } else if (done < 0) {
    m_exit = ChildExit{};  // ECHILD: reaped elsewhere; it is gone either way
  }
  return m_exit;
}

void Child::signal(int signal) const {
  // Until it is reaped, the pid cannot be reused: signalling it is safe.
  if (!m_exit && m_pid > 0) {
    ::kill(m_pid, signal);
  }
}

ChildExit Child::terminate(std::chrono::milliseconds grace, std::chrono::milliseconds kill_wait) {
  if (poll()) {
    return *m_exit;
  }
  signal(SIGTERM);
  if (wait_reaped(Clock::now() + grace)) {
    return *m_exit;
  }
  signal(SIGKILL);
  if (wait_reaped(Clock::now() + kill_wait)) {
    return *m_exit;
  }
  ChildExit stuck;
  stuck.still_running = true;
  return stuck;
}

bool Child::wait_reaped(std::chrono::steady_clock::time_point deadline) {
  while (!poll()) {
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

Expected<ProcessHandle> ProcessHandle::open(int pid) {
  if (pid <= 0) {
    return Error{fmt::format("{} is not a process id", pid)};
  }
  Fd fd(pidfd_open_raw(pid));
  if (fd.valid()) {
    ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC);
    return ProcessHandle(pid, std::move(fd));
  }
  if (errno == ESRCH) {
    return Error{fmt::format("process {} has exited", pid)};
  }
  if (errno != ENOSYS && errno != EPERM) {
    return Error{fmt::format("cannot open process {}: {}", pid, std::strerror(errno))};
  }
  // No pidfd (kernel before 5.3, or forbidden by a seccomp filter): plain pids.
  if (::kill(pid, 0) != 0 && errno == ESRCH) {
    return Error{fmt::format("process {} has exited", pid)};
  }
  return ProcessHandle(pid, Fd());
}

ProcessHandle::ProcessHandle(ProcessHandle&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_fd(std::move(other.m_fd)) {}

ProcessHandle& ProcessHandle::operator=(ProcessHandle&& other) noexcept {
  if (this != &other) {
    m_pid = std::exchange(other.m_pid, -1);
    m_fd = std::move(other.m_fd);
  }
  return *this;
}

Status ProcessHandle::signal(int signal) const {
  const int rc = m_fd.valid() ? pidfd_send_signal_raw(m_fd.get(), signal) : ::kill(m_pid, signal);
  if (rc == 0 || errno == ESRCH) {
    return {};
  }
  return Error{fmt::format("cannot signal process {}: {}{}", m_pid, std::strerror(errno),
                           errno == EPERM ? " (it belongs to another user; use sudo)" : "")};
}

bool ProcessHandle::wait_exit(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (m_fd.valid()) {
      pollfd pfd{m_fd.get(), POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::max<long>(0, left.count())));
      if (ready > 0) {
        return true;
      }
      if (ready < 0 && errno != EINTR) {
        return false;
      }
    } else {
      // Without a pidfd: gone, or a zombie waiting for its parent.
      if (::kill(m_pid, 0) != 0 && errno == ESRCH) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (left.count() <= 0) {
      return false;
    }
  }
}

std::optional<ChildExit> reap_exited_child(int pid) {
  int status = 0;
  if (pid <= 0 || wait_no_hang(pid, status) != pid) {
    return std::nullopt;
  }
  return decode(status);
}

unsigned current_uid() {
  return ::getuid();
}

int current_pid() {
  return static_cast<int>(::getpid());
}

}  // namespace gb10tune::platform

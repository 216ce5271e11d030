#include "gb10tune/platform/process_exec.hpp"

#include <fcntl.h>
#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>
#endif
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "exec_words.hpp"

namespace gb10tune::platform {

namespace {

// Marks every descriptor from `first` up close-on-exec: close_range(2) where the kernel has
// it, else each open one listed in /proc/self/fd.
void close_on_exec_from(int first) {
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  if (::syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) {
    return;
  }
#endif
  const long limit = ::sysconf(_SC_OPEN_MAX);
  for (int fd = first; fd < (limit > 0 && limit < 65536 ? limit : 65536); ++fd) {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) {
      ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
}

// Default actions and an empty mask for the signals a supervisor sends.
void reset_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) {
    std::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace

Error exec_replace(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   int output_fd) {
  if (argv.empty() || argv[0].empty() || argv[0].front() != '/') {
    return Error{fmt::format("internal: the server must be run from an absolute path, got '{}'",
                             argv.empty() ? std::string() : argv[0])};
  }
  std::vector<char*> args = detail::exec_words(argv);
  std::vector<char*> envp = detail::exec_words(env);

  if (output_fd >= 0) {
    ::dup2(output_fd, STDOUT_FILENO);
    ::dup2(output_fd, STDERR_FILENO);
  }
  close_on_exec_from(STDERR_FILENO + 1);
  reset_signals();
  ::execve(args[0], args.data(), envp.data());
  const int saved = errno;
  return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(saved))};
}

}  // namespace gb10tune::platform

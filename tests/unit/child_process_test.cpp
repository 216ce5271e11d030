// Child::terminate against a child that SIGKILL cannot end in time: another process traces it,
// so its exit is reported to the tracer first and its parent cannot reap it (what a process
// stuck in the kernel, in a driver or on a dead NFS mount, looks like to its parent).
#include "gb10tune/platform/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <future>
#include <optional>
#include <thread>

namespace gb10tune::platform {
namespace {

using namespace std::chrono_literals;

// A process of its own that traces `pid` (PTRACE_SEIZE) and then only waits to be killed.
class Tracer {
 public:
  explicit Tracer(int pid) {
    int fds[2];
    if (::pipe(fds) != 0) {
      return;
    }
    m_pid = ::fork();
    if (m_pid == 0) {
      ::close(fds[0]);
      const char answer = ::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) == 0 ? 'y' : 'n';
      const int why = errno;
      [[maybe_unused]] auto n = ::write(fds[1], &answer, 1);
      n = ::write(fds[1], &why, sizeof(why));
      while (true) {
        ::pause();
      }
    }
    ::close(fds[1]);
    char answer = 'n';
    if (m_pid > 0 && ::read(fds[0], &answer, 1) == 1 &&
        ::read(fds[0], &m_errno, sizeof(m_errno)) == sizeof(m_errno)) {
      m_attached = answer == 'y';
    }
    ::close(fds[0]);
  }
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  ~Tracer() { release(); }

  bool attached() const { return m_attached; }
  int error() const { return m_errno; }
  // Ends the tracer: the traced child's exit then reaches its parent.
  void release() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
      m_pid = -1;
    }
  }

 private:
  pid_t m_pid = -1;
  bool m_attached = false;
  int m_errno = 0;
};

TEST(ChildProcess, TerminateGivesUpWhenSigkillDoesNotEndTheChild) {
  auto spawned = Child::spawn({"/bin/sleep", "60"}, {}, STDERR_FILENO);
  ASSERT_TRUE(spawned) << spawned.error().message;
  Child child = std::move(spawned).value();
  const int pid = child.pid();
  Tracer tracer(pid);
  if (!tracer.attached() && tracer.error() == ENOSYS) {
    // qemu-user, which runs the arm64 tests on an x86 machine, implements no ptrace. The sleeper
    // holds this test's stderr: ended here, lest the run wait a minute for it to close.
    child.terminate(2s);
    GTEST_SKIP() << "ptrace is not implemented here (an emulator): the stopped child this needs "
                    "cannot be made; the native runs check it";
  }
  ASSERT_TRUE(tracer.attached()) << "cannot trace the child: " << std::strerror(tracer.error());

  auto ended = std::async(std::launch::async, [&child] { return child.terminate(200ms); });
  const bool returned = ended.wait_for(15s) == std::future_status::ready;
  tracer.release();  // lets a terminate() without a bound return, and the zombie be reaped
  const ChildExit exit = ended.get();
  EXPECT_TRUE(returned) << "terminate() waited for the child without a bound";
  EXPECT_TRUE(exit.still_running) << "giving up must be reported";
  ::waitpid(pid, nullptr, 0);
}

TEST(ChildProcess, TerminateEndsAChildThatIgnoresNothing) {
  auto spawned = Child::spawn({"/bin/sleep", "60"}, {}, STDERR_FILENO);
  ASSERT_TRUE(spawned) << spawned.error().message;
  Child child = std::move(spawned).value();
  const ChildExit exit = child.terminate(2s);
  EXPECT_FALSE(exit.still_running);
  EXPECT_EQ(exit.signal, SIGTERM);
}

// reap_exited_child, polled until it has an answer (at most 30 s: a loaded machine).
std::optional<ChildExit> reaped_in_time(int pid) {
  std::optional<ChildExit> exit;
  for (int i = 0; i < 6000 && !exit; ++i) {
    std::this_thread::sleep_for(5ms);
    exit = reap_exited_child(pid);
  }
  return exit;
}

// A server spawned by a Child that is gone (as launch::start_server leaves it) is reaped by pid,
// once, without blocking while it runs; a process that is no child of ours is never waited for.
TEST(ChildProcess, AChildNoChildHoldsIsReapedByPidOnce) {
  auto sleeper = Child::spawn({"/bin/sleep", "60"}, {}, STDERR_FILENO);
  ASSERT_TRUE(sleeper) << sleeper.error().message;
  const int pid = sleeper->pid();
  EXPECT_FALSE(reap_exited_child(pid)) << "still running";
  sleeper->signal(SIGKILL);
  const auto killed = reaped_in_time(pid);
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->signal, SIGKILL);
  EXPECT_FALSE(reap_exited_child(pid)) << "reaped already";

  auto exiting = Child::spawn({"/bin/sh", "-c", "exit 3"}, {}, STDERR_FILENO);
  ASSERT_TRUE(exiting) << exiting.error().message;
  const auto exited = reaped_in_time(exiting->pid());
  ASSERT_TRUE(exited);
  EXPECT_EQ(exited->exit_status, 3);
  EXPECT_EQ(exited->signal, 0);

  EXPECT_FALSE(reap_exited_child(1)) << "init is no child of ours";
  EXPECT_FALSE(reap_exited_child(0)) << "never \"any child\"";
  EXPECT_FALSE(reap_exited_child(-1));
}

TEST(ChildProcess, CurrentPidIsThisProcess) {
  EXPECT_EQ(current_pid(), static_cast<int>(::getpid()));
}

}  // namespace
}  // namespace gb10tune::platform

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

TEST(ChildProcess, ReapExitedTellsHowAChildEndedOnceItHas) {
  int exiting = -1;
  int killed = -1;
  {
    auto first = Child::spawn({"/bin/sh", "-c", "sleep 0.2; exit 7"}, {}, STDERR_FILENO);
    auto second = Child::spawn({"/bin/sleep", "60"}, {}, STDERR_FILENO);
    ASSERT_TRUE(first && second);
    exiting = first->pid();
    killed = second->pid();
  }  // as after a restart: the Child objects are gone, the processes are still our children
  EXPECT_FALSE(reap_exited(exiting));  // still running
  std::optional<ChildExit> exit;
  for (int i = 0; i < 500 && !exit; ++i) {
    std::this_thread::sleep_for(10ms);
    exit = reap_exited(exiting);
  }
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_status, 7);
  EXPECT_EQ(exit->signal, 0);
  EXPECT_FALSE(reap_exited(exiting));  // reaped once: no child of ours any more

  ASSERT_EQ(::kill(killed, SIGKILL), 0);
  exit.reset();
  for (int i = 0; i < 500 && !exit; ++i) {
    std::this_thread::sleep_for(10ms);
    exit = reap_exited(killed);
  }
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->exit_status, -1);
}

TEST(ChildProcess, ReapExitedLeavesWhatIsNoChildOfOurs) {
  EXPECT_FALSE(reap_exited(1));  // init
  EXPECT_FALSE(reap_exited(0));  // never "any child"
  EXPECT_FALSE(reap_exited(-1));
  EXPECT_EQ(current_pid(), static_cast<int>(::getpid()));
}

}  // namespace
}  // namespace gb10tune::platform

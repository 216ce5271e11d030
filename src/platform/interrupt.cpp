#include "gb10tune/platform/interrupt.hpp"

#include <pthread.h>
#include <unistd.h>

#include <csignal>

namespace gb10tune::platform {

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

extern "C" void on_signal(int signal) {
  if (g_interrupted.load()) {
    ::_exit(128 + signal);  // a second Ctrl-C: the user insists
  }
  g_signal = signal;  // before the flag: a job that sees the flag finds the signal
  g_interrupted = true;
}

}  // namespace

struct InterruptGuard::Saved {
  struct sigaction int_action {};
  struct sigaction term_action {};
};

InterruptGuard::InterruptGuard() : m_saved(new Saved) {
  g_interrupted = false;
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &m_saved->int_action);
  ::sigaction(SIGTERM, &action, &m_saved->term_action);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &m_saved->int_action, nullptr);
  ::sigaction(SIGTERM, &m_saved->term_action, nullptr);
  delete m_saved;
}

const std::atomic<bool>& InterruptGuard::flag() const {
  return g_interrupted;
}

int InterruptGuard::last_signal() {
  return g_signal;
}

void without_sigpipe(const std::function<void()>& body) {
  sigset_t pipe_only;
  sigset_t old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  struct Restore {
    const sigset_t& pipe_only;
    const sigset_t& old;
    ~Restore() {
      if (sigismember(&old, SIGPIPE) == 1) {
        return;  // blocked before: left as it was, pending or not
      }
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        const timespec now{0, 0};
        (void)sigtimedwait(&pipe_only, nullptr, &now);  // taken, never delivered
      }
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
  } restore{pipe_only, old};
  body();
}

}  // namespace gb10tune::platform

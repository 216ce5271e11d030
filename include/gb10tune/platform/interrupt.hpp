// Ctrl-C handling for long jobs: SIGINT and SIGTERM set a flag that the job polls between
// steps, so that every allocation is freed on the way out; which signal it was decides the
// exit code (130 or 143).
#pragma once

#include <atomic>
#include <functional>

namespace gb10tune::platform {

// Installs the handlers for its lifetime and restores the previous ones after. One at a time.
class InterruptGuard {
 public:
  InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  ~InterruptGuard();

  // Becomes true at the first SIGINT/SIGTERM. A second signal ends the process at once, with
  // 128 + that signal.
  const std::atomic<bool>& flag() const;

  // The signal that set the flag of the current guard, or of the last one after it is gone;
  // 0 when none did. Reset when a guard is installed.
  static int last_signal();

 private:
  struct Saved;
  Saved* m_saved;
};

// Runs `body` with SIGPIPE blocked on the calling thread, and takes away one that `body` raised
// there: a write inside a library (libcurl's TLS alert to a server that has hung up) then fails
// with EPIPE instead of ending the process. Other threads keep SIGPIPE as it was.
void without_sigpipe(const std::function<void()>& body);

}  // namespace gb10tune::platform

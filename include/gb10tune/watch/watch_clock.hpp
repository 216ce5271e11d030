// The watch's sense of time: monotonic seconds since it began, and waits that SIGINT or SIGTERM
// cut short. SteadyWatchClock is the real one; tests pass a clock that jumps.
#pragma once

#include <chrono>

#include "gb10tune/platform/interrupt.hpp"

namespace gb10tune::watch {

// Time and interrupts as the supervisor sees them.
class WatchClock {
 public:
  virtual ~WatchClock() = default;

  // Seconds since the clock began; never goes back.
  virtual double now_s() const = 0;
  // Waits until now_s() reaches `t_s` (returns at once when it has). False when SIGINT or
  // SIGTERM arrived before or while waiting: the watch is to end.
  virtual bool wait_until(double t_s) = 0;
  // Sleeps `seconds` whatever arrives meanwhile (an interrupt is seen by the next wait_until).
  virtual void sleep_for(double seconds) = 0;
};

// std::chrono::steady_clock, with SIGINT and SIGTERM caught (platform::InterruptGuard) for the
// clock's lifetime: one at a time in a process.
class SteadyWatchClock final : public WatchClock {
 public:
  SteadyWatchClock();

  double now_s() const override;
  bool wait_until(double t_s) override;
  void sleep_for(double seconds) override;

 private:
  std::chrono::steady_clock::time_point m_started;
  platform::InterruptGuard m_guard;
};

}  // namespace gb10tune::watch

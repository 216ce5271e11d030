// The watch's decision core: samples in, events out, no clock and no processes.
#include "gb10tune/watch/watch_policy.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gb10tune::watch {
namespace {

constexpr std::uint64_t GiB = 1ull << 30;

Sample at(double t, double available_gib, bool running = true) {
  Sample s;
  s.t_s = t;
  s.available_bytes = static_cast<std::uint64_t>(available_gib * static_cast<double>(GiB));
  s.server_running = running;
  s.server_rss_bytes = 2 * GiB;
  return s;
}

std::vector<EventKind> kinds(const std::vector<Event>& events) {
  std::vector<EventKind> out;
  for (const Event& e : events) {
    out.push_back(e.kind);
  }
  return out;
}

Thresholds thresholds() {
  return Thresholds{12 * GiB, 6 * GiB, GiB};
}

RestartPolicy restarts() {
  RestartPolicy r;
  r.enabled = true;
  r.first_delay_s = 5;
  r.max_delay_s = 20;
  r.max_attempts = 3;
  r.stable_after_s = 100;
  r.need_bytes = 4 * GiB;
  return r;
}

TEST(WatchPolicy, AValueHoveringAtTheWarningWarnsOnceUntilItClearsTheHysteresis) {
  WatchPolicy policy(thresholds(), RestartPolicy{});
  std::vector<EventKind> all;
  double t = 0;
  for (const double gib : {12.5, 11.9, 12.05, 11.95, 12.6, 11.99, 12.99}) {
    for (const EventKind k : kinds(policy.observe(at(t++, gib)))) {
      all.push_back(k);
    }
  }
  EXPECT_EQ(all, std::vector<EventKind>{EventKind::low});
  const auto cleared = policy.observe(at(t++, 13.0));
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0].kind, EventKind::recovered);
  EXPECT_EQ(cleared[0].threshold_bytes, 13 * GiB);
  EXPECT_EQ(kinds(policy.observe(at(t++, 11.0))), std::vector<EventKind>{EventKind::low});
}

TEST(WatchPolicy, TheFloorStopsOnceAndWithoutRestartsTheWatchIsFinished) {
  WatchPolicy policy(thresholds(), RestartPolicy{});
  EXPECT_TRUE(policy.observe(at(0, 20)).empty());
  const auto events = policy.observe(at(1, 5.5));
  EXPECT_EQ(kinds(events), (std::vector<EventKind>{EventKind::low, EventKind::floor}));
  EXPECT_EQ(events[1].threshold_bytes, 6 * GiB);
  EXPECT_EQ(events[1].server_rss_bytes, 2 * GiB);
  // While the stop runs, further samples below the floor ask for nothing more.
  EXPECT_TRUE(policy.observe(at(2, 5.0)).empty());
  EXPECT_TRUE(policy.stop_done(3, true).empty());
  EXPECT_TRUE(policy.finished());
  EXPECT_FALSE(policy.waiting_for_restart());
  EXPECT_TRUE(policy.observe(at(4, 5.0, false)).empty());
}

TEST(WatchPolicy, AFailedStopLetsTheFloorFireAgain) {
  WatchPolicy policy(thresholds(), RestartPolicy{});
  EXPECT_EQ(kinds(policy.observe(at(0, 5))),
            (std::vector<EventKind>{EventKind::low, EventKind::floor}));
  EXPECT_TRUE(policy.stop_done(1, false).empty());
  EXPECT_EQ(kinds(policy.observe(at(2, 5))), std::vector<EventKind>{EventKind::floor});
}

TEST(WatchPolicy, BackOffDoublesUpToItsCap) {
  WatchPolicy policy(thresholds(), restarts());
  EXPECT_DOUBLE_EQ(policy.delay_before(1), 5);
  EXPECT_DOUBLE_EQ(policy.delay_before(2), 10);
  EXPECT_DOUBLE_EQ(policy.delay_before(3), 20);
  EXPECT_DOUBLE_EQ(policy.delay_before(4), 20);
  EXPECT_DOUBLE_EQ(policy.delay_before(60), 20);
}

TEST(WatchPolicy, ACrashIsRestartedAfterTheBackOffOnceMemoryAllows) {
  WatchPolicy policy(thresholds(), restarts());
  EXPECT_TRUE(policy.observe(at(0, 20)).empty());
  EXPECT_EQ(kinds(policy.observe(at(1, 20, false))), std::vector<EventKind>{EventKind::exited});
  EXPECT_TRUE(policy.waiting_for_restart());
  EXPECT_TRUE(policy.observe(at(5.9, 20, false)).empty());  // back-off: 5 s from t=1
  // Due, but 9 GiB < floor 6 + max(need 4, last RSS 2) = 10 GiB: one notice, then quiet.
  const auto waiting = policy.observe(at(6, 9, false));
  EXPECT_EQ(kinds(waiting), (std::vector<EventKind>{EventKind::low, EventKind::restart_waiting}));
  EXPECT_EQ(waiting[1].threshold_bytes, 10 * GiB);
  EXPECT_EQ(waiting[1].attempt, 1);
  EXPECT_TRUE(policy.observe(at(7, 9, false)).empty());
  const auto restart = policy.observe(at(8, 10, false));
  ASSERT_EQ(kinds(restart), std::vector<EventKind>{EventKind::restart});
  EXPECT_EQ(restart[0].attempt, 1);
  EXPECT_DOUBLE_EQ(restart[0].delay_s, 5);
  EXPECT_TRUE(policy.restart_done(9, true).empty());
  // Running again: the low spell that began at t=6 ends; nothing else happens.
  EXPECT_EQ(kinds(policy.observe(at(10, 20))), std::vector<EventKind>{EventKind::recovered});
  EXPECT_TRUE(policy.observe(at(11, 20)).empty());
}

TEST(WatchPolicy, FailedStartsBackOffAndGiveUpAtTheCap) {
  WatchPolicy policy(thresholds(), restarts());
  policy.observe(at(0, 5));   // low + floor
  policy.stop_done(0, true);  // attempt 1 due at 5
  std::vector<double> starts;
  std::vector<Event> last;
  for (double t = 1; t < 200 && !policy.finished(); t += 1) {
    for (const Event& e : policy.observe(at(t, 30, false))) {
      if (e.kind == EventKind::restart) {
        starts.push_back(t);
        last = policy.restart_done(t, false);
      }
    }
  }
  // Attempts at 5, 5+10, 15+20; the third failure gives up.
  EXPECT_EQ(starts, (std::vector<double>{5, 15, 35}));
  ASSERT_EQ(kinds(last), std::vector<EventKind>{EventKind::gave_up});
  EXPECT_EQ(last[0].attempt, 3);
  EXPECT_TRUE(policy.finished());
}

TEST(WatchPolicy, AServerThatRanStablyStartsAFreshBackOff) {
  RestartPolicy r = restarts();
  r.max_attempts = 2;
  WatchPolicy policy(thresholds(), r);
  policy.observe(at(0, 20));
  policy.observe(at(1, 20, false));                               // exited: attempt 1 at 6
  ASSERT_EQ(kinds(policy.observe(at(6, 20, false))).size(), 1u);  // restart
  policy.restart_done(6, true);
  policy.observe(at(7, 20, false));  // exited again: attempt 2 at 17
  ASSERT_EQ(kinds(policy.observe(at(17, 20, false))), std::vector<EventKind>{EventKind::restart});
  policy.restart_done(17, true);
  policy.observe(at(200, 20));  // ran 183 s > 100 s: the count resets
  EXPECT_EQ(kinds(policy.observe(at(201, 20, false))), std::vector<EventKind>{EventKind::exited});
  const auto again = policy.observe(at(206, 20, false));
  ASSERT_EQ(kinds(again), std::vector<EventKind>{EventKind::restart});
  EXPECT_EQ(again[0].attempt, 1);
  EXPECT_DOUBLE_EQ(again[0].delay_s, 5);
}

TEST(WatchPolicy, TheFloorDuringARestartAbortsItOnce) {
  WatchPolicy policy(thresholds(), restarts());
  policy.observe(at(0, 20, false));  // exited
  ASSERT_EQ(kinds(policy.observe(at(5, 20, false))), std::vector<EventKind>{EventKind::restart});
  EXPECT_EQ(kinds(policy.observe(at(6, 5, false))),
            (std::vector<EventKind>{EventKind::low, EventKind::floor}));
  EXPECT_TRUE(policy.observe(at(7, 5, false)).empty());
  EXPECT_TRUE(policy.restart_done(8, false).empty());  // aborted: attempt 2 after 10 s
  EXPECT_TRUE(policy.waiting_for_restart());
}

TEST(WatchPolicy, IdleOnlyWarnsUntilAServerIsAdopted) {
  WatchPolicy policy(thresholds(), restarts());
  policy.idle();
  EXPECT_EQ(kinds(policy.observe(at(0, 3, false))), std::vector<EventKind>{EventKind::low});
  EXPECT_TRUE(policy.observe(at(1, 3, false)).empty());
  policy.adopted(2, 8 * GiB);
  EXPECT_EQ(kinds(policy.observe(at(2, 3))), std::vector<EventKind>{EventKind::floor});
}

TEST(WatchPolicy, EventNamesAreStable) {
  EXPECT_EQ(event_name(EventKind::floor), "floor");
  EXPECT_EQ(event_name(EventKind::restart_waiting), "restart_waiting");
  EXPECT_EQ(event_name(EventKind::gave_up), "gave_up");
}

}  // namespace
}  // namespace gb10tune::watch

// watch --notify: which events are edges, the three bodies, and the sender: a post that hangs
// or fails never holds up send(), the queue is bounded, failures are retried a bounded number
// of times.
#include "gb10tune/watch/watch_notify.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace gb10tune::watch {
namespace {

using namespace std::chrono_literals;

Event notify_test_event(EventKind kind) {
  Event event;
  event.kind = kind;
  event.t_s = 12.5;
  event.available_bytes = 10ULL << 30;
  event.sampled = true;
  event.threshold_bytes = 12ULL << 30;
  event.pid = 4242;
  return event;
}

TEST(WatchNotify, OnlyEdgesAreNotified) {
  EXPECT_EQ(notify_edge(EventKind::watching), "heartbeat");
  EXPECT_EQ(notify_edge(EventKind::low), "warn");
  EXPECT_EQ(notify_edge(EventKind::recovered), "clear");
  EXPECT_EQ(notify_edge(EventKind::stopped), "stop");
  EXPECT_EQ(notify_edge(EventKind::restarted), "restart");
  EXPECT_EQ(notify_edge(EventKind::gave_up), "give-up");
  for (const EventKind kind : {EventKind::floor, EventKind::restart, EventKind::ended,
                               EventKind::restart_waiting, EventKind::exited}) {
    EXPECT_FALSE(notify_edge(kind)) << event_name(kind);
    EXPECT_FALSE(notify_body(notify_test_event(kind), NotifyFormat::generic, ""));
  }
}

TEST(WatchNotify, TheThreeBodies) {
  const Event low = notify_test_event(EventKind::low);
  const auto generic = nlohmann::json::parse(*notify_body(low, NotifyFormat::generic, "T"));
  EXPECT_EQ(generic["notify"], "warn");
  EXPECT_EQ(generic["event"], "low");
  EXPECT_EQ(generic["at"], "T");
  EXPECT_EQ(generic["mem_available_bytes"], 10ULL << 30);
  const auto slack = nlohmann::json::parse(*notify_body(low, NotifyFormat::slack, "T"));
  ASSERT_TRUE(slack.contains("text"));
  EXPECT_TRUE(slack["text"].get<std::string>().starts_with("gb10tune watch: T low: "));
  const auto discord = nlohmann::json::parse(*notify_body(low, NotifyFormat::discord, "T"));
  EXPECT_EQ(discord["content"], slack["text"]);
  EXPECT_EQ(*parse_notify_format("slack"), NotifyFormat::slack);
  const auto bad = parse_notify_format("teams");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::usage);
}

// What the tests' posts tell the test: each call signals, so that the test waits for a state
// on a condition variable rather than polling (the sender's own counters, updated just after a
// post returns, are looked at again every 20 ms).
class PostLog {
 public:
  // Counts a call and wakes the waiter; returns the count.
  int called() {
    const std::lock_guard lock(m_mutex);
    ++m_calls;
    m_changed.notify_all();
    return m_calls;
  }
  int calls() {
    const std::lock_guard lock(m_mutex);
    return m_calls;
  }
  void set_calls(int calls) {
    const std::lock_guard lock(m_mutex);
    m_calls = calls;
  }
  // Lets a hanging post return.
  void release() {
    const std::lock_guard lock(m_mutex);
    m_released = true;
    m_changed.notify_all();
  }
  // Hangs until released, 60 s at most.
  void hang() {
    std::unique_lock lock(m_mutex);
    m_changed.wait_for(lock, 60s, [this] { return m_released; });
  }
  // Waits up to 10 s for `done`; its value at the end.
  template <typename Done>
  bool wait_for(const Done& done) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    std::unique_lock lock(m_mutex);
    while (!done(m_calls)) {
      if (std::chrono::steady_clock::now() >= until) {
        return false;
      }
      m_changed.wait_for(lock, 20ms);
    }
    return true;
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_calls = 0;
  bool m_released = false;
};

TEST(WatchNotify, AHangingReceiverNeverHoldsUpSend) {
  PostLog log;
  std::atomic<bool> hanging{false};
  NotifySender::Limits limits;
  limits.queue = 4;
  limits.close_wait_s = 0.2;
  {
    NotifySender sender(
        [&](const std::string&) -> Status {
          hanging = true;
          log.called();
          // Hangs until released: a send() that posted itself would return only after this
          // one has.
          log.hang();
          hanging = false;
          return {};
        },
        limits);
    sender.send("{}");
    ASSERT_TRUE(log.wait_for([](int calls) { return calls >= 1; }));
    ASSERT_EQ(log.calls(), 1);  // the first is being posted, and hangs
    for (int i = 0; i < 9; ++i) {
      sender.send("{}");
    }
    // Every send() returned while the first post still hangs: none waited for the network.
    EXPECT_TRUE(hanging) << "send() waited for the network";
    EXPECT_EQ(log.calls(), 1);  // the rest wait in a queue of 4
    EXPECT_EQ(sender.dropped(), 5U);
    log.release();
  }
  EXPECT_GE(log.calls(), 1);
}

TEST(WatchNotify, AFailingReceiverIsTriedABoundedNumberOfTimes) {
  PostLog log;
  NotifySender::Limits limits;
  limits.attempts = 3;
  limits.retry_delay_s = 0.01;
  NotifySender sender(
      [&](const std::string&) -> Status {
        return log.called() < 3 ? Status(Error{"refused"}) : Status();
      },
      limits);
  sender.send("a");
  EXPECT_TRUE(log.wait_for([&](int) { return sender.delivered() + sender.failed() >= 1; }));
  EXPECT_EQ(sender.delivered(), 1U);
  EXPECT_EQ(log.calls(), 3);
  // Set before the send: the sender's thread may post "b" before send() returns.
  log.set_calls(-10);
  sender.send("b");  // refused 3 times more: given up
  EXPECT_TRUE(log.wait_for([&](int) { return sender.delivered() + sender.failed() >= 2; }));
  EXPECT_EQ(sender.failed(), 1U);
  EXPECT_EQ(log.calls(), -7);
}

}  // namespace
}  // namespace gb10tune::watch

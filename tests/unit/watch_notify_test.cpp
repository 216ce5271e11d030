// watch --notify: which events are edges, the three bodies, and the sender: a post that hangs
// or fails never holds up send(), the queue is bounded, failures are retried a bounded number
// of times.
#include "gb10tune/watch/watch_notify.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

TEST(WatchNotify, AHangingReceiverNeverHoldsUpSend) {
  std::atomic<bool> release{false};
  std::atomic<bool> hanging{false};
  std::atomic<int> calls{0};
  NotifySender::Limits limits;
  limits.queue = 4;
  limits.close_wait_s = 0.2;
  {
    NotifySender sender(
        [&](const std::string&) -> Status {
          hanging = true;
          ++calls;
          // Hangs until released (60 s at most): a send() that posted itself would return
          // only after this one has.
          for (int i = 0; i < 60000 && !release; ++i) {
            std::this_thread::sleep_for(1ms);
          }
          hanging = false;
          return {};
        },
        limits);
    sender.send("{}");
    for (int i = 0; i < 60000 && calls == 0; ++i) {
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(calls, 1);  // the first is being posted, and hangs
    for (int i = 0; i < 9; ++i) {
      sender.send("{}");
    }
    // Every send() returned while the first post still hangs: none waited for the network.
    EXPECT_TRUE(hanging) << "send() waited for the network";
    EXPECT_EQ(calls, 1);  // the rest wait in a queue of 4
    EXPECT_EQ(sender.dropped(), 5U);
    release = true;
  }
  EXPECT_GE(calls, 1);
}

TEST(WatchNotify, AFailingReceiverIsTriedABoundedNumberOfTimes) {
  std::atomic<int> calls{0};
  NotifySender::Limits limits;
  limits.attempts = 3;
  limits.retry_delay_s = 0.01;
  NotifySender sender(
      [&](const std::string&) -> Status {
        return ++calls < 3 ? Status(Error{"refused"}) : Status();
      },
      limits);
  sender.send("a");
  for (int i = 0; i < 2000 && sender.delivered() + sender.failed() == 0; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(sender.delivered(), 1U);
  EXPECT_EQ(calls, 3);
  // Set before the send: the sender's thread may post "b" before send() returns.
  calls = -10;
  sender.send("b");  // refused 3 times more: given up
  for (int i = 0; i < 2000 && sender.delivered() + sender.failed() < 2; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(sender.failed(), 1U);
  EXPECT_EQ(calls, -7);
}

}  // namespace
}  // namespace gb10tune::watch

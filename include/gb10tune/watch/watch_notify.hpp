// `gb10tune watch --notify URL`: an edge-triggered JSON event per change of state (start-up
// heartbeat, warn, clear, stop, restart, give-up), posted by a sender thread with a bounded
// queue and a bounded retry, so that a receiver that hangs or refuses never delays a sample.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "gb10tune/util/expected.hpp"
#include "gb10tune/watch/watch_policy.hpp"

namespace gb10tune::watch {

// The body's shape: the event's own JSON, or a Slack- or Discord-compatible message.
enum class NotifyFormat { generic, slack, discord };

// "generic", "slack" or "discord"; a usage Error naming --notify-format and the three.
Expected<NotifyFormat> parse_notify_format(std::string_view text);

// The edge an event is notified as: watching "heartbeat", low "warn", recovered "clear",
// stopped "stop", restarted "restart", gave_up "give-up"; nullopt for every other event.
std::optional<std::string_view> notify_edge(EventKind kind);

// The body posted for `event` at wall-clock time `at`: generic is the event's --json object
// with "notify": EDGE added; slack {"text": LINE}, discord {"content": LINE}, LINE being the
// event's text line. nullopt when the event is not an edge. Never fails.
std::optional<std::string> notify_body(const Event& event, NotifyFormat format,
                                       std::string_view at);

// Posts bodies on a thread of its own. Not copyable.
class NotifySender {
 public:
  // Delivers one body; an Error when the receiver refuses, fails or does not answer in time.
  using Post = std::function<Status(const std::string& body)>;
  struct Limits {
    std::size_t queue = 32;    // bodies waiting at most; a full queue drops its oldest
    int attempts = 3;          // tries per body
    double retry_delay_s = 1;  // before the second try, doubled for each further one
    double close_wait_s = 5;   // what the destructor gives the bodies still queued
  };

  NotifySender(Post post, Limits limits);
  // Delivers what is queued for at most close_wait_s (one try each), then drops the rest.
  ~NotifySender();
  NotifySender(const NotifySender&) = delete;
  NotifySender& operator=(const NotifySender&) = delete;

  // Queues `body` and returns at once; never waits for the network.
  void send(std::string body);

  // Counts so far: bodies delivered, given up after every try, dropped from a full queue.
  std::uint64_t delivered() const;
  std::uint64_t failed() const;
  std::uint64_t dropped() const;

 private:
  void run();
  bool deliver(const std::string& body);

  Post m_post;
  Limits m_limits;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::string> m_queue;
  bool m_closing = false;
  std::chrono::steady_clock::time_point m_close_deadline;
  std::uint64_t m_delivered = 0;
  std::uint64_t m_failed = 0;
  std::uint64_t m_dropped = 0;
  std::thread m_thread;
};

}  // namespace gb10tune::watch

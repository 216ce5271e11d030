#include "gb10tune/watch/watch_notify.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gb10tune/watch/watch_events.hpp"

namespace gb10tune::watch {

Expected<NotifyFormat> parse_notify_format(std::string_view text) {
  if (text == "generic") {
    return NotifyFormat::generic;
  }
  if (text == "slack") {
    return NotifyFormat::slack;
  }
  if (text == "discord") {
    return NotifyFormat::discord;
  }
  return Error{fmt::format("--notify-format '{}': give generic, slack or discord", text),
               ExitCode::usage};
}

std::optional<std::string_view> notify_edge(EventKind kind) {
  switch (kind) {
    case EventKind::watching:
      return "heartbeat";
    case EventKind::low:
      return "warn";
    case EventKind::recovered:
      return "clear";
    case EventKind::stopped:
      return "stop";
    case EventKind::restarted:
      return "restart";
    case EventKind::gave_up:
      return "give-up";
    default:
      return std::nullopt;
  }
}

std::optional<std::string> notify_body(const Event& event, NotifyFormat format,
                                       std::string_view at) {
  const auto edge = notify_edge(event.kind);
  if (!edge) {
    return std::nullopt;
  }
  if (format == NotifyFormat::generic) {
    nlohmann::json doc = event_to_json(event, std::string(at));
    doc["notify"] = *edge;
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line = "gb10tune watch: " + render_event_text(event, std::string(at));
  while (!line.empty() && line.back() == '\n') {
    line.pop_back();
  }
  const nlohmann::json doc = {{format == NotifyFormat::slack ? "text" : "content", line}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

NotifySender::NotifySender(Post post, Limits limits)
    : m_post(std::move(post)), m_limits(limits), m_thread([this] { run(); }) {}

NotifySender::~NotifySender() {
  {
    const std::lock_guard lock(m_mutex);
    m_closing = true;
    m_close_deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(m_limits.close_wait_s));
  }
  m_wake.notify_all();
  m_thread.join();
}

void NotifySender::send(std::string body) {
  {
    const std::lock_guard lock(m_mutex);
    if (m_queue.size() >= m_limits.queue) {
      m_queue.pop_front();
      ++m_dropped;
    }
    m_queue.push_back(std::move(body));
  }
  m_wake.notify_all();
}

std::uint64_t NotifySender::delivered() const {
  const std::lock_guard lock(m_mutex);
  return m_delivered;
}

std::uint64_t NotifySender::failed() const {
  const std::lock_guard lock(m_mutex);
  return m_failed;
}

std::uint64_t NotifySender::dropped() const {
  const std::lock_guard lock(m_mutex);
  return m_dropped;
}

void NotifySender::run() {
  std::unique_lock lock(m_mutex);
  while (true) {
    m_wake.wait(lock, [this] { return m_closing || !m_queue.empty(); });
    if (m_queue.empty() || (m_closing && std::chrono::steady_clock::now() >= m_close_deadline)) {
      if (m_closing) {
        m_dropped += m_queue.size();
        return;
      }
      continue;
    }
    std::string body = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    const bool ok = deliver(body);
    lock.lock();
    ++(ok ? m_delivered : m_failed);
  }
}

// One body, tried up to `attempts` times with a doubling delay; while closing, one try only.
bool NotifySender::deliver(const std::string& body) {
  double delay_s = m_limits.retry_delay_s;
  for (int attempt = 1; attempt <= m_limits.attempts; ++attempt) {
    if (m_post(body)) {
      return true;
    }
    std::unique_lock lock(m_mutex);
    const auto wait = std::chrono::duration<double>(delay_s);
    if (m_wake.wait_for(lock, wait, [this] { return m_closing; })) {
      return false;  // closing: no retries
    }
    delay_s *= 2;
  }
  return false;
}

}  // namespace gb10tune::watch

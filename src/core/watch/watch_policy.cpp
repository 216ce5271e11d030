#include "gb10tune/watch/watch_policy.hpp"

#include <algorithm>
#include <cmath>

namespace gb10tune::watch {

std::string_view event_name(EventKind kind) {
  switch (kind) {
    case EventKind::watching:
      return "watching";
    case EventKind::low:
      return "low";
    case EventKind::recovered:
      return "recovered";
    case EventKind::floor:
      return "floor";
    case EventKind::stopped:
      return "stopped";
    case EventKind::stop_failed:
      return "stop_failed";
    case EventKind::exited:
      return "exited";
    case EventKind::restart_waiting:
      return "restart_waiting";
    case EventKind::restart:
      return "restart";
    case EventKind::restarted:
      return "restarted";
    case EventKind::restart_failed:
      return "restart_failed";
    case EventKind::gave_up:
      return "gave_up";
    case EventKind::ended:
      return "ended";
  }
  return "ended";
}

WatchPolicy::WatchPolicy(Thresholds thresholds, RestartPolicy restart)
    : m_thresholds(thresholds), m_restart(restart) {}

double WatchPolicy::delay_before(int attempt) const {
  const double doubled = m_restart.first_delay_s * std::pow(2.0, std::max(0, attempt - 1));
  return std::min(doubled, m_restart.max_delay_s);
}

Event WatchPolicy::make(EventKind kind, const Sample& sample, std::uint64_t threshold) const {
  Event event;
  event.kind = kind;
  event.t_s = sample.t_s;
  event.available_bytes = sample.available_bytes;
  event.sampled = true;
  event.threshold_bytes = threshold;
  event.server_rss_bytes = sample.server_rss_bytes;
  event.server_gpu_bytes = sample.server_gpu_bytes;
  event.gpus = sample.gpus;
  event.attempt = m_attempt;
  return event;
}

void WatchPolicy::went_down(double t_s, std::vector<Event>& events) {
  m_state = State::down;
  m_waiting_said = false;
  if (!m_restart.enabled) {
    return;
  }
  const int next = m_attempt + 1;
  if (m_restart.max_attempts > 0 && next > m_restart.max_attempts) {
    m_state = State::given_up;
    Event event;
    event.kind = EventKind::gave_up;
    event.t_s = t_s;
    event.attempt = m_attempt;
    events.push_back(event);
    return;
  }
  m_restart_at = t_s + delay_before(next);
}

std::vector<Event> WatchPolicy::observe(const Sample& sample) {
  std::vector<Event> events;
  if (!m_seen) {
    m_seen = true;
    m_running_since = sample.t_s;
  }
  if (sample.server_rss_bytes && m_state == State::running) {
    m_last_rss = *sample.server_rss_bytes;
  }

  // The warning, with hysteresis: one `low` per spell below warn, cleared above warn + h.
  const std::uint64_t clear_at = m_thresholds.warn_bytes + m_thresholds.hysteresis_bytes;
  if (!m_low && sample.available_bytes < m_thresholds.warn_bytes) {
    m_low = true;
    events.push_back(make(EventKind::low, sample, m_thresholds.warn_bytes));
  } else if (m_low && sample.available_bytes >= clear_at) {
    m_low = false;
    events.push_back(make(EventKind::recovered, sample, clear_at));
  }

  const bool below_floor = sample.available_bytes < m_thresholds.floor_bytes;
  switch (m_state) {
    case State::running:
      if (!sample.server_running) {
        events.push_back(make(EventKind::exited, sample, 0));
        went_down(sample.t_s, events);
        break;
      }
      if (m_attempt > 0 && sample.t_s - m_running_since >= m_restart.stable_after_s) {
        m_attempt = 0;  // it ran long enough: the next trouble starts a fresh back-off
      }
      if (below_floor) {
        m_state = State::stopping;
        events.push_back(make(EventKind::floor, sample, m_thresholds.floor_bytes));
      }
      break;
    case State::starting:
      // A server that is loading can eat the last of the memory too: abort the start.
      if (below_floor && !m_abort_said) {
        m_abort_said = true;
        events.push_back(make(EventKind::floor, sample, m_thresholds.floor_bytes));
      }
      break;
    case State::down: {
      if (!m_restart.enabled || sample.t_s < m_restart_at) {
        break;
      }
      const std::uint64_t need =
          m_thresholds.floor_bytes + std::max(m_restart.need_bytes, m_last_rss);
      if (sample.available_bytes >= need) {
        m_state = State::starting;
        m_abort_said = false;
        ++m_attempt;
        Event event = make(EventKind::restart, sample, need);
        event.delay_s = delay_before(m_attempt);
        events.push_back(event);
      } else if (!m_waiting_said) {
        m_waiting_said = true;
        Event event = make(EventKind::restart_waiting, sample, need);
        event.attempt = m_attempt + 1;
        events.push_back(event);
      }
      break;
    }
    case State::stopping:
    case State::given_up:
    case State::idle:
      break;
  }
  return events;
}

std::vector<Event> WatchPolicy::stop_done(double t_s, bool stopped) {
  std::vector<Event> events;
  if (m_state != State::stopping) {
    return events;
  }
  if (stopped) {
    went_down(t_s, events);
  } else {
    m_state = State::running;
  }
  return events;
}

std::vector<Event> WatchPolicy::restart_done(double t_s, bool started) {
  std::vector<Event> events;
  if (m_state != State::starting) {
    return events;
  }
  if (started) {
    m_state = State::running;
    m_running_since = t_s;
  } else {
    went_down(t_s, events);
  }
  return events;
}

void WatchPolicy::idle() {
  m_state = State::idle;
}

void WatchPolicy::adopted(double t_s, std::uint64_t need_bytes) {
  m_state = State::running;
  m_restart.need_bytes = need_bytes;
  m_attempt = 0;
  m_running_since = t_s;
  m_last_rss = 0;
}

}  // namespace gb10tune::watch

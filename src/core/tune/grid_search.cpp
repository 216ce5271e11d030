#include "gb10tune/tune/grid_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gb10tune::tune {

GridSearch::GridSearch(std::vector<KnobPlan> knobs, nlohmann::json start)
    : m_knobs(searched_knobs(std::move(knobs))), m_start(std::move(start)) {
  if (!m_start.is_object()) {
    m_start = nlohmann::json::object();
  }
  // Knobs that need a restart vary slowest: the per-request ones then share one server.
  std::stable_partition(m_knobs.begin(), m_knobs.end(),
                        [](const KnobPlan& plan) { return plan.mode == ApplyMode::restart; });
  for (const KnobPlan& plan : m_knobs) {
    m_start[std::string(plan.knob->setting)] = plan.values.front();
    m_size *= plan.values.size();
  }
  m_incumbent = m_start;
}

Candidate GridSearch::candidate_at(std::size_t point) const {
  Candidate candidate;
  candidate.settings = m_start;
  std::vector<std::size_t> index(m_knobs.size());
  for (std::size_t k = m_knobs.size(); k-- > 0;) {
    index[k] = point % m_knobs[k].values.size();
    point /= m_knobs[k].values.size();
  }
  nlohmann::json changed = nlohmann::json::array();
  for (std::size_t k = 0; k < m_knobs.size(); ++k) {
    if (index[k] == 0) {
      continue;  // the start's value
    }
    const std::string key(m_knobs[k].knob->setting);
    candidate.setting += (candidate.setting.empty() ? "" : "+") + key;
    changed.push_back(m_knobs[k].values[index[k]]);
    candidate.settings[key] = m_knobs[k].values[index[k]];
  }
  // One changed knob reads as the coordinate search's candidates do.
  candidate.value = changed.size() == 1 ? changed.front() : changed;
  candidate.incumbent = m_incumbent;
  return candidate;
}

std::optional<Candidate> GridSearch::next() {
  if (m_pending) {
    return m_pending;
  }
  if (m_point >= m_size) {
    return std::nullopt;
  }
  Candidate candidate = candidate_at(m_point);
  candidate.index = ++m_proposed;
  m_pending = candidate;
  return candidate;
}

void GridSearch::record(const Candidate& candidate, const Decision& decision) {
  if (!m_pending || candidate.index != m_pending->index) {
    throw std::logic_error(fmt::format(
        "GridSearch::record: candidate {} is not the one proposed last", candidate.index));
  }
  m_pending.reset();
  ++m_point;
  if (decision.outcome == Outcome::better) {
    m_incumbent = candidate.settings;
  }
}

int GridSearch::remaining_at_most() const {
  const std::size_t left = m_size - std::min(m_point, m_size);
  return static_cast<int>(left) - (m_pending ? 1 : 0);
}

}  // namespace gb10tune::tune

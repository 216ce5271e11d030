#include "gb10tune/tune/coordinate_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gb10tune::tune {

namespace {

std::string key_of(const nlohmann::json& settings) {
  return settings.dump();  // objects keep their keys sorted: one text per configuration
}

// What a point measured before means for a walk now: a point that was better then has since
// been beaten by the incumbent.
Decision as_known(Decision decision) {
  if (decision.outcome == Outcome::better) {
    return Decision{Outcome::not_better};
  }
  return decision;
}

// A single step that a diagonal may combine: measured, neither refused nor worse.
bool undecided(const std::map<std::string, Decision>& memo, const nlohmann::json& settings) {
  const auto it = memo.find(key_of(settings));
  return it != memo.end() && !it->second.worse &&
         (it->second.outcome == Outcome::not_better || it->second.outcome == Outcome::better);
}

}  // namespace

CoordinateSearch::CoordinateSearch(std::vector<KnobPlan> knobs, nlohmann::json start)
    : m_incumbent(std::move(start)) {
  if (!m_incumbent.is_object()) {
    m_incumbent = nlohmann::json::object();
  }
  m_knobs = searched_knobs(std::move(knobs));
  for (const KnobPlan& plan : m_knobs) {
    const std::string key(plan.knob->setting);
    if (!m_incumbent.contains(key)) {
      m_incumbent[key] = plan.values.front();
    }
  }
  m_memo[key_of(m_incumbent)] = Decision{Outcome::not_better};  // the start is measured
  if (m_knobs.empty()) {
    m_phase = Phase::done;
  }
}

std::vector<nlohmann::json> CoordinateSearch::walk_values(std::size_t k, int direction) const {
  const KnobPlan& plan = m_knobs[k];
  const nlohmann::json& current = m_incumbent[std::string(plan.knob->setting)];
  std::vector<nlohmann::json> values;
  if (!plan.ordered) {
    if (direction > 0) {
      std::copy_if(plan.values.begin(), plan.values.end(), std::back_inserter(values),
                   [&](const nlohmann::json& v) { return v != current; });
    }
    return values;
  }
  const double here = current.get<double>();
  for (const nlohmann::json& v : plan.values) {
    const double x = v.get<double>();
    if (direction > 0 ? x > here : x < here) {
      values.push_back(v);
    }
  }
  std::sort(values.begin(), values.end(), [direction](const auto& a, const auto& b) {
    return direction > 0 ? a.template get<double>() < b.template get<double>()
                         : a.template get<double>() > b.template get<double>();
  });
  return values;
}

Candidate CoordinateSearch::make_candidate(const nlohmann::json& settings) {
  Candidate candidate;
  candidate.index = ++m_proposed;
  candidate.pass = m_pass;
  candidate.incumbent = m_incumbent;
  candidate.settings = settings;
  nlohmann::json changed = nlohmann::json::array();
  for (const KnobPlan& plan : m_knobs) {
    const std::string key(plan.knob->setting);
    if (settings[key] != m_incumbent[key]) {
      candidate.setting += (candidate.setting.empty() ? "" : "+") + key;
      changed.push_back(settings[key]);
    }
  }
  candidate.value = changed.size() == 1 ? changed.front() : changed;
  return candidate;
}

std::optional<Candidate> CoordinateSearch::next() {
  if (m_pending) {
    return m_pending;
  }
  while (m_phase == Phase::walks) {
    if (m_knob >= m_knobs.size()) {
      end_pass();
      continue;
    }
    if (m_step == 0 && m_walk.empty()) {
      m_walk = walk_values(m_knob, m_direction);
      if (m_walk.empty()) {
        end_direction();
        continue;
      }
    }
    if (m_step >= m_walk.size()) {
      end_direction();
      continue;
    }
    nlohmann::json settings = m_incumbent;
    settings[std::string(m_knobs[m_knob].knob->setting)] = m_walk[m_step];
    if (const auto known = m_memo.find(key_of(settings)); known != m_memo.end()) {
      advance_walk(settings, as_known(known->second));  // measured before: not again
      continue;
    }
    m_pending = make_candidate(settings);
    return m_pending;
  }
  while (m_phase == Phase::diagonals) {
    if (m_diagonals.empty()) {
      m_phase = Phase::done;
      break;
    }
    if (m_memo.contains(key_of(m_diagonals.front()))) {
      m_diagonals.erase(m_diagonals.begin());
      continue;
    }
    m_pending = make_candidate(m_diagonals.front());
    return m_pending;
  }
  return std::nullopt;
}

void CoordinateSearch::record(const Candidate& candidate, const Decision& decision) {
  if (!m_pending || candidate.index != m_pending->index) {
    throw std::logic_error(fmt::format(
        "CoordinateSearch::record: candidate {} is not the one proposed last", candidate.index));
  }
  m_pending.reset();
  m_memo[key_of(candidate.settings)] = decision;
  if (decision.outcome == Outcome::better) {
    m_memo[key_of(m_incumbent)].worse = true;  // beaten beyond the noise: no diagonal from it
  }
  if (m_phase == Phase::walks) {
    advance_walk(candidate.settings, decision);
    return;
  }
  m_diagonals.erase(m_diagonals.begin());
  if (decision.outcome == Outcome::better) {
    m_incumbent = candidate.settings;  // a ridge climbed: walk every knob again from there
    m_diagonals.clear();
    m_phase = Phase::walks;
    ++m_pass;
    m_knob = 0;
    m_direction = +1;
    m_step = 0;
    m_walk.clear();
    m_walk_kept = m_pass_kept = false;
  }
}

void CoordinateSearch::advance_walk(const nlohmann::json& settings, const Decision& decision) {
  if (decision.outcome == Outcome::better) {
    m_incumbent = settings;
    m_pass_kept = m_walk_kept = true;
    ++m_step;
  } else if (!m_knobs[m_knob].ordered || decision.promising) {
    ++m_step;  // a choice tries each other value; a promising step does not end a walk
  } else {
    end_direction();
  }
}

void CoordinateSearch::end_direction() {
  if (m_direction > 0 && m_knobs[m_knob].ordered && !m_walk_kept) {
    m_direction = -1;  // nothing kept going up: try going down
  } else {
    ++m_knob;
    m_direction = +1;
    m_walk_kept = false;
  }
  m_step = 0;
  m_walk.clear();
}

void CoordinateSearch::end_pass() {
  m_knob = 0;
  m_direction = +1;
  m_step = 0;
  m_walk.clear();
  m_walk_kept = false;
  if (m_pass_kept) {
    ++m_pass;  // something changed: every knob again from the new incumbent
    m_pass_kept = false;
    return;
  }
  m_diagonals = diagonal_points();
  m_phase = m_diagonals.empty() ? Phase::done : Phase::diagonals;
}

std::vector<nlohmann::json> CoordinateSearch::diagonal_points() const {
  // Each knob's neighbouring values: the nearest on either side, or every other choice.
  std::vector<std::vector<nlohmann::json>> neighbours;
  for (std::size_t k = 0; k < m_knobs.size(); ++k) {
    std::vector<nlohmann::json> near;
    for (const int direction : {+1, -1}) {
      const std::vector<nlohmann::json> walk = walk_values(k, direction);
      if (!m_knobs[k].ordered) {
        near.insert(near.end(), walk.begin(), walk.end());
      } else if (!walk.empty()) {
        near.push_back(walk.front());
      }
    }
    neighbours.push_back(std::move(near));
  }
  std::vector<nlohmann::json> points;
  for (std::size_t i = 0; i < m_knobs.size(); ++i) {
    const std::string key_i(m_knobs[i].knob->setting);
    for (std::size_t j = i + 1; j < m_knobs.size(); ++j) {
      const std::string key_j(m_knobs[j].knob->setting);
      for (const nlohmann::json& vi : neighbours[i]) {
        nlohmann::json single_i = m_incumbent;
        single_i[key_i] = vi;
        if (!undecided(m_memo, single_i)) {
          continue;
        }
        for (const nlohmann::json& vj : neighbours[j]) {
          nlohmann::json single_j = m_incumbent;
          single_j[key_j] = vj;
          nlohmann::json both = single_i;
          both[key_j] = vj;
          if (undecided(m_memo, single_j) && !m_memo.contains(key_of(both))) {
            points.push_back(std::move(both));
          }
        }
      }
    }
  }
  return points;
}

int CoordinateSearch::remaining_at_most() const {
  if (m_phase == Phase::done) {
    return 0;
  }
  if (!m_pending && !CoordinateSearch(*this).next()) {
    return 0;  // only points measured before are left: nothing more will be proposed
  }
  std::size_t points = 1;
  for (const KnobPlan& plan : m_knobs) {
    points *= plan.values.size();
  }
  const std::size_t seen = m_memo.size() + (m_pending ? 1 : 0);
  return points > seen ? static_cast<int>(points - seen) : 0;
}

int CoordinateSearch::expected_remaining() const {
  std::size_t left = 0;
  if (m_phase == Phase::walks) {
    left += m_walk.size() > m_step ? m_walk.size() - m_step : 0;
    for (std::size_t k = m_knob + 1; k < m_knobs.size(); ++k) {
      left += m_knobs[k].values.size() - 1;
    }
  } else if (m_phase == Phase::diagonals) {
    left = m_diagonals.size();
  }
  left -= m_pending && left > 0 ? 1 : 0;
  return std::min(static_cast<int>(left), remaining_at_most());
}

}  // namespace gb10tune::tune

#include "gb10tune/tune/coordinate_search.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gb10tune::tune {

namespace {

// How many of `plan`'s values lie above its current one (the walk's first direction; every
// other value for a choice), the rest lying below.
std::size_t values_above(const KnobPlan& plan) {
  if (!plan.ordered) {
    return plan.values.size() - 1;
  }
  const double here = plan.values.front().get<double>();
  std::size_t above = 0;
  for (std::size_t i = 1; i < plan.values.size(); ++i) {
    above += plan.values[i].get<double>() > here ? 1 : 0;
  }
  return above;
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
}

std::optional<Candidate> CoordinateSearch::next() {
  if (m_pending) {
    return m_pending;
  }
  while (m_knob < m_knobs.size()) {
    const KnobPlan& plan = m_knobs[m_knob];
    const std::size_t above = values_above(plan);
    // Above: values 1 … above; below: the rest, nearest first.
    const std::size_t first = m_direction > 0 ? 1 : 1 + above;
    const std::size_t count = m_direction > 0 ? above : plan.values.size() - 1 - above;
    if (m_step >= count) {
      end_direction();
      continue;
    }
    Candidate candidate;
    candidate.index = ++m_proposed;
    candidate.setting = std::string(plan.knob->setting);
    candidate.value = plan.values[first + m_step];
    candidate.incumbent = m_incumbent;
    candidate.settings = m_incumbent;
    candidate.settings[candidate.setting] = candidate.value;
    m_pending = candidate;
    return candidate;
  }
  return std::nullopt;
}

void CoordinateSearch::record(const Candidate& candidate, Outcome outcome) {
  if (!m_pending || candidate.index != m_pending->index) {
    throw std::logic_error(fmt::format(
        "CoordinateSearch::record: candidate {} is not the one proposed last", candidate.index));
  }
  m_pending.reset();
  if (outcome == Outcome::better) {
    m_incumbent = candidate.settings;
  }
  // A choice tries each other value; a walk goes on only while the last step helped.
  if (!m_knobs[m_knob].ordered || outcome == Outcome::better) {
    ++m_step;
  } else {
    end_direction();
  }
}

void CoordinateSearch::end_direction() {
  if (m_direction > 0 && m_knobs[m_knob].ordered) {
    m_direction = -1;
  } else {
    ++m_knob;
    m_direction = +1;
  }
  m_step = 0;
}

int CoordinateSearch::remaining_at_most() const {
  std::size_t total = 0;
  for (std::size_t k = m_knob; k < m_knobs.size(); ++k) {
    const std::size_t above = values_above(m_knobs[k]);
    const std::size_t below = m_knobs[k].values.size() - 1 - above;
    if (k != m_knob) {
      total += above + below;
      continue;
    }
    const std::size_t left_here = m_direction > 0 ? above : below;
    total += left_here - std::min(m_step, left_here) + (m_direction > 0 ? below : 0);
    total -= m_pending && total > 0 ? 1 : 0;  // proposed already
  }
  return static_cast<int>(total);
}

}  // namespace gb10tune::tune

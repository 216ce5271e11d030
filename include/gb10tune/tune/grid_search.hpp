// The exhaustive grid: every combination of the searched knobs' values, the start's excepted,
// each compared (paired, by the runner) with the best so far. It costs the product of the
// knobs' value counts where the coordinate search costs about their sum; it exists to check
// the coordinate search's winner against the grid's on the same server (docs/tune.md).
#pragma once

#include <optional>
#include <vector>

#include "gb10tune/tune/search.hpp"

namespace gb10tune::tune {

// The grid over `knobs` from `start`. The combinations are proposed in table order with the
// last knob varying fastest, so that per-request knobs placed last share one server. A point
// the plan refuses or that fails is passed over; the others never end the grid early.
class GridSearch final : public Search {
 public:
  GridSearch(std::vector<KnobPlan> knobs, nlohmann::json start);

  std::optional<Candidate> next() override;
  void record(const Candidate& candidate, const Decision& decision) override;
  const nlohmann::json& incumbent() const override { return m_incumbent; }
  int proposed() const override { return m_proposed; }
  int remaining_at_most() const override;

  // Every combination the grid holds, the start's included.
  std::size_t size() const { return m_size; }

 private:
  // The candidate of combination `point` (a mixed-radix number over the knobs' values).
  Candidate candidate_at(std::size_t point) const;

  std::vector<KnobPlan> m_knobs;
  nlohmann::json m_start;
  nlohmann::json m_incumbent;
  std::size_t m_size = 1;
  std::size_t m_point = 1;  // the next combination; 0 is the start
  std::optional<Candidate> m_pending;
  int m_proposed = 0;
};

}  // namespace gb10tune::tune

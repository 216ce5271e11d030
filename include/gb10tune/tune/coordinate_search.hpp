// The report's method as a search: one change at a time from the current settings. Each knob in
// turn: its next value outward from the incumbent's, kept only when it measured better beyond the
// noise, and the walk in that direction goes on only while the last step helped; then the other
// direction; then the next knob. A candidate the plan refuses (it does not fit) ends the walk in
// its direction, as a worse one does.
#pragma once

#include <optional>
#include <vector>

#include "gb10tune/tune/knobs.hpp"
#include "gb10tune/tune/search.hpp"

namespace gb10tune::tune {

// The search's state; plain data, so that a journal can replay it.
class CoordinateSearch final : public Search {
 public:
  // `knobs` as plan_knobs gave them (skipped ones are passed over); `start` the current
  // settings (key → value) of every searched knob.
  CoordinateSearch(std::vector<KnobPlan> knobs, nlohmann::json start);

  // The next candidate to measure, or nullopt when every knob's walk has ended. Calling it
  // again without record() returns the same candidate.
  std::optional<Candidate> next() override;

  // What measuring `candidate` (the last next()) found; a better one becomes the incumbent.
  // A candidate other than the last proposed one is a caller's bug: std::logic_error.
  void record(const Candidate& candidate, Outcome outcome) override;

  // The settings that have measured best so far (the start until something is better).
  const nlohmann::json& incumbent() const override { return m_incumbent; }

  // Candidates proposed so far, and an upper bound of those still to come (for the ETA).
  int proposed() const override { return m_proposed; }
  int remaining_at_most() const override;

 private:
  // The walk in this direction is over: the other direction, or the next knob.
  void end_direction();

  std::vector<KnobPlan> m_knobs;
  nlohmann::json m_incumbent;
  std::size_t m_knob = 0;  // index into m_knobs
  int m_direction = +1;    // +1 outward to larger values, -1 to smaller
  std::size_t m_step = 0;  // values walked in this direction
  std::optional<Candidate> m_pending;
  int m_proposed = 0;
};

}  // namespace gb10tune::tune

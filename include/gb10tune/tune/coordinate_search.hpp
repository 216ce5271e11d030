// The report's method as a search that converges: one change at a time from the best settings
// so far, in passes over the knobs until a whole pass keeps nothing, then the diagonal steps
// (two knobs changed together) that the last pass left undecided.
//
// In a pass each knob in turn is walked from the incumbent's value: the next value outward,
// kept when it measured better beyond the noise; the walk in that direction goes on while the
// last step helped or was promising (not yet beyond the noise, but its estimate favoured it by
// kSmallestGain or more), and ends at a step that was worse, undecided without promise, refused
// by the plan or failed. The other direction is walked only when the first kept nothing. A
// choice (flash attention, a cache type) tries each other value. A point measured before is
// never measured again: what it gave then stands (better then counts as not better now, since
// the incumbent has since beaten it).
//
// When a pass keeps nothing, the pairs of neighbouring values whose single steps were neither
// better nor worse beyond the noise are tried together (a ridge that no single change climbs:
// knobs that interact); one that is better starts a new pass from it.
#pragma once

#include <map>
#include <optional>
#include <string>
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

  // The next candidate to measure, or nullopt when a pass and its diagonals kept nothing.
  // Calling it again without record() returns the same candidate.
  std::optional<Candidate> next() override;

  // What measuring `candidate` (the last next()) found; a better one becomes the incumbent.
  // A candidate other than the last proposed one is a caller's bug: std::logic_error.
  void record(const Candidate& candidate, const Decision& decision) override;

  // The settings that have measured best so far (the start until something is better).
  const nlohmann::json& incumbent() const override { return m_incumbent; }

  // Candidates proposed so far; an upper bound of those still to come (the points of the grid
  // never measured); about how many this pass still holds.
  int proposed() const override { return m_proposed; }
  int remaining_at_most() const override;
  int expected_remaining() const override;

  // The pass the search is in (1, 2, …).
  int pass() const { return m_pass; }

 private:
  enum class Phase { walks, diagonals, done };

  // The values of knob `k` from the incumbent's in direction `direction` (+1 larger, nearest
  // first; -1 smaller), or every other value for a choice (direction +1; none for -1).
  std::vector<nlohmann::json> walk_values(std::size_t k, int direction) const;
  // The walk in this direction is over: the other direction, the next knob or the next phase.
  void end_direction();
  // Applies `decision` about `settings` to the walk (measured now or known from before).
  void advance_walk(const nlohmann::json& settings, const Decision& decision);
  // The pass is over: another pass when it kept something, else the diagonals.
  void end_pass();
  // The diagonal steps from the incumbent that the memory of single steps allows.
  std::vector<nlohmann::json> diagonal_points() const;
  Candidate make_candidate(const nlohmann::json& settings);

  std::vector<KnobPlan> m_knobs;
  nlohmann::json m_incumbent;
  std::map<std::string, Decision> m_memo;  // every point measured (settings dump → decision)
  Phase m_phase = Phase::walks;
  int m_pass = 1;
  bool m_pass_kept = false;            // this pass kept a change
  std::size_t m_knob = 0;              // index into m_knobs
  int m_direction = +1;                // +1 outward to larger values, -1 to smaller
  std::size_t m_step = 0;              // values walked in this direction
  bool m_walk_kept = false;            // this knob's walk kept a change (no walk the other way)
  std::vector<nlohmann::json> m_walk;  // this direction's values, fixed at its start
  std::vector<nlohmann::json> m_diagonals;  // the diagonal points still to try
  std::optional<Candidate> m_pending;
  int m_proposed = 0;
};

}  // namespace gb10tune::tune

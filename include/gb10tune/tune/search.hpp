// What a tune's search is, whatever its strategy: it proposes the next configuration to measure
// and learns how it compared with the best so far. Two strategies: the report's coordinate
// search (coordinate_search.hpp, the default) and the exhaustive grid (grid_search.hpp), kept
// for checking the coordinate search against on the same server.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/tune/knobs.hpp"

namespace gb10tune::tune {

// The smallest change worth keeping (3%): a comparison that is not yet beyond the noise but
// whose estimate favours the candidate by at least this much is measured further, and does not
// end a walk.
inline constexpr double kSmallestGain = 0.03;

// One configuration to measure: the incumbent's settings with one knob changed (a grid's
// point: the start's with one or more changed; a coordinate search's diagonal step: two).
struct Candidate {
  int index = 0;  // 1, 2, … in the order the search proposed them
  int pass = 1;   // the coordinate search's pass over the knobs (1 for a grid)
  // The knob's setting key; for a grid point, the changed keys joined by '+' in table order.
  std::string setting;
  nlohmann::json value;      // its new value; for a grid point, an array of the changed values
  nlohmann::json settings;   // every searched setting (key → value) of this candidate
  nlohmann::json incumbent;  // the settings it is compared with
};

// How a measured candidate compared with the incumbent.
enum class Outcome {
  better,        // beyond the noise: it becomes the incumbent
  not_better,    // no significant difference, or worse
  does_not_fit,  // the plan refused it: nothing was started
  failed,        // it did not start or a request failed: never kept
};

// "better", "not better", "does not fit", "failed".
std::string_view to_string(Outcome outcome);

// What the runner decided about a measured candidate, as much as a search needs.
struct Decision {
  Decision(Outcome o = Outcome::not_better, bool is_promising = false, bool is_worse = false)
      : outcome(o), promising(is_promising), worse(is_worse) {}
  Outcome outcome;
  // Not better beyond the noise, but its estimate favours it by kSmallestGain or more: a walk
  // goes on past it (the next value may be better beyond the noise).
  bool promising;
  bool worse;  // worse beyond the noise
};

// How the candidates are chosen.
enum class Strategy {
  coordinate,  // one knob at a time from the current settings (the report's method; default)
  grid,        // every combination of the searched knobs' values (exhaustive; for checking)
};

// "coordinate", "grid".
std::string_view to_string(Strategy strategy);

// to_string's text back (--strategy, the journal); nullopt for any other text.
std::optional<Strategy> parse_strategy(std::string_view text);

// A search's state: plain data, so that a journal can replay it.
class Search {
 public:
  virtual ~Search() = default;
  // The next candidate to measure, or nullopt when the search has nothing left. Calling it
  // again without record() returns the same candidate.
  virtual std::optional<Candidate> next() = 0;
  // What measuring `candidate` (the last next()) found; a better one becomes the incumbent. A
  // candidate other than the last proposed one is a caller's bug: std::logic_error.
  virtual void record(const Candidate& candidate, const Decision& decision) = 0;
  // The settings that have measured best so far (the start until something is better).
  virtual const nlohmann::json& incumbent() const = 0;
  // Candidates proposed so far, and an upper bound of those still to come (for the ETA).
  virtual int proposed() const = 0;
  virtual int remaining_at_most() const = 0;
  // About how many are still to come (for the progress line): remaining_at_most() for a grid,
  // the rest of the current pass for a coordinate search.
  virtual int expected_remaining() const { return remaining_at_most(); }
};

// The search of `strategy` over `knobs` (plan_knobs's answer; skipped ones are passed over)
// from `start` (the searched knobs' current values).
std::unique_ptr<Search> make_search(Strategy strategy, std::vector<KnobPlan> knobs,
                                    nlohmann::json start);

// The knobs a search walks: not skipped, with something to change (two values or more).
std::vector<KnobPlan> searched_knobs(std::vector<KnobPlan> knobs);

}  // namespace gb10tune::tune

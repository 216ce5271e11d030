// A tune's search walked in code as the runner walks it, for the journal and report tests.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gb10tune/tune/tune_result.hpp"

namespace gb10tune::testing {

// What the walk measured, and the incumbent's measurement at its end.
struct WalkedTune {
  std::vector<tune::CandidateResult> candidates;
  tune::Measurement incumbent;
};

// Walks `search` from the start's measurement `start`: a candidate whose settings `refused_why`
// gives a reason for does not fit (nothing measured); any other is measured by `measure`, costs
// `cost` and is judged paired against the incumbent's measurement (better: it becomes the
// incumbent). Stops after `steps` candidates (0: when the search ends).
WalkedTune walk_tune(tune::Search& search, const tune::Measurement& start,
                     const std::function<tune::Measurement(const nlohmann::json&)>& measure,
                     const std::function<std::string(const nlohmann::json&)>& refused_why,
                     const tune::CandidateCost& cost, std::size_t steps = 0);

}  // namespace gb10tune::testing

#include "support/tune_walk.hpp"

namespace gb10tune::testing {

WalkedTune walk_tune(tune::Search& search, const tune::Measurement& start,
                     const std::function<tune::Measurement(const nlohmann::json&)>& measure,
                     const std::function<std::string(const nlohmann::json&)>& refused_why,
                     const tune::CandidateCost& cost, std::size_t steps) {
  WalkedTune walked;
  walked.incumbent = start;
  while (steps == 0 || walked.candidates.size() < steps) {
    const auto candidate = search.next();
    if (!candidate) {
      break;
    }
    tune::CandidateResult r;
    r.candidate = *candidate;
    r.why = refused_why(candidate->settings);
    if (!r.why.empty()) {
      r.outcome = tune::Outcome::does_not_fit;
    } else {
      r.measured = measure(candidate->settings);
      r.against = bench::compare_paired(walked.incumbent.values, r.measured.values, true);
      r.outcome = r.against.verdict == bench::Verdict::better ? tune::Outcome::better
                                                              : tune::Outcome::not_better;
      r.cost = cost;
      walked.incumbent = r.outcome == tune::Outcome::better ? r.measured : walked.incumbent;
    }
    search.record(*candidate, tune::decision_of(r, true));
    walked.candidates.push_back(r);
  }
  return walked;
}

}  // namespace gb10tune::testing

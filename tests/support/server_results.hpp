// Saved server-benchmark results built in code, for the compare and result tests.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/bench/server_result.hpp"

namespace gb10tune::testing {

// A result at concurrency 1 whose i-th request reports decode `decode[i]` t/s, prefill
// `prefill[i % size]` t/s (prompt_ms consistent with 1000 tokens) and, when `accepted` is not
// empty, 300 draft tokens of which `accepted[i % size]` were accepted (of 256 generated).
// Settings: model, build and `--spec-draft-n-max` = `draft_n_max` as launch argv.
bench::ServerBenchResult make_result(const std::vector<double>& decode,
                                     const std::vector<double>& prefill,
                                     const std::vector<double>& accepted = {}, int draft_n_max = 3);

// Adds a concurrency level whose round totals are `totals` and whose per-session rates are
// `per_session` (round by round, `concurrency` per round).
void add_level(bench::ServerBenchResult& result, int concurrency,
               const std::vector<double>& per_session);

// `result` with every request renamed "<prefix>/<n>": it no longer pairs with a run of
// make_result (bench compare then judges it by the medians' intervals, unpaired).
bench::ServerBenchResult with_other_requests(bench::ServerBenchResult result,
                                             const std::string& prefix = "other");

}  // namespace gb10tune::testing

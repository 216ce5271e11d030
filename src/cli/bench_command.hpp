// `gb10tune bench`: GPU memory bandwidth per allocation path (K1).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "context.hpp"
#include "gb10tune/bench/bandwidth_plan.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::cli {

// Adds the `bench` subcommand to `app`; the returned Runner runs it with the parsed options.
Runner setup_bench(CLI::App& app);

// Runs the bandwidth job against `ctx` with Ctrl-C handling and, when `progress` is set, one
// progress line per case on stderr. Shared with `probe --quick-bench`.
Expected<bench::BandwidthRun> run_bandwidth_job(const bench::BandwidthOptions& options,
                                                std::optional<double> peak_override, Context& ctx,
                                                bool progress);

}  // namespace gb10tune::cli

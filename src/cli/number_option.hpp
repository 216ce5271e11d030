// The range check of number options with a fraction (seconds, GB/s).
#pragma once

#include <CLI/CLI.hpp>

namespace gb10tune::cli {

// Accepts a finite decimal number from `min` to `max` (inclusive). CLI11's own Range lets nan
// through and its parser takes inf and 1e999; this one refuses them with a usage error naming
// the option and the range, before anything runs.
CLI::Validator finite_range(double min, double max);

}  // namespace gb10tune::cli

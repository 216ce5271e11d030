// The range check of number options with a fraction (seconds, GB/s).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gb10tune::cli {

// Accepts a finite decimal number from `min` to `max` (inclusive). CLI11's own Range lets nan
// through and its parser takes inf and 1e999; this one refuses them with a usage error naming
// the option and the range, before anything runs. `hidden_name`: the option's name for a
// hidden alias, whose name CLI11 leaves out of its message.
CLI::Validator finite_range(double min, double max, std::string hidden_name = {});

// Accepts a decimal integer from `min` to `max` (inclusive); otherwise a usage error saying
// whether the value is not a number or out of range, and the range ("abc is not a number; give
// an integer from 0 to 1000000"). Its description is empty: --help shows the option's own
// value text (N), never CLI11's "INT:INT in [0 - 1000000]".
CLI::Validator integer_range(std::int64_t min, std::int64_t max);

}  // namespace gb10tune::cli

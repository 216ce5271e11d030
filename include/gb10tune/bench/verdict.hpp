// The verdict of a comparison of two measurements of one metric, shared by the unpaired rule of
// bench compare (non-overlapping intervals of the medians) and the paired test (bench/paired).
#pragma once

#include <optional>
#include <string_view>

namespace gb10tune::bench {

// The verdict on one metric.
enum class Verdict {
  no_significant_difference,  // the intervals overlap (paired: the ratio's interval holds 1)
  better,                     // beyond the noise, in the metric's good direction
  worse,                      // beyond the noise, in its bad direction
  not_comparable,             // one run lacks the metric (no speculation, say)
  too_few_samples,            // too few samples (or pairs) for a verdict of better or worse
};

// "no significant difference", "better", "worse", "not comparable", "too few samples".
std::string_view to_string(Verdict verdict);

// to_string's text back to the verdict; nullopt for any other text.
std::optional<Verdict> parse_verdict(std::string_view text);

}  // namespace gb10tune::bench

#include "gb10tune/bench/verdict.hpp"

#include <array>

namespace gb10tune::bench {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::no_significant_difference:
      return "no significant difference";
    case Verdict::better:
      return "better";
    case Verdict::worse:
      return "worse";
    case Verdict::not_comparable:
      return "not comparable";
    case Verdict::too_few_samples:
      return "too few samples";
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  constexpr std::array kVerdicts = {Verdict::no_significant_difference, Verdict::better,
                                    Verdict::worse, Verdict::not_comparable,
                                    Verdict::too_few_samples};
  for (const Verdict verdict : kVerdicts) {
    if (to_string(verdict) == text) {
      return verdict;
    }
  }
  return std::nullopt;
}

}  // namespace gb10tune::bench

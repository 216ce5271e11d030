// The name a typo most likely meant ("--modle" → "--model", "lauch" → "launch").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune {

// The edit distance of `a` and `b`: insertions, deletions, substitutions and transpositions of
// two neighbours, each 1 (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a typo of it: at most 2 edits,
// and fewer than half of `word`'s letters; the first of equally near ones. nullopt otherwise.
std::optional<std::string> closest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace gb10tune

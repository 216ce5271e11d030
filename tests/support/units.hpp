// Byte units shared by the tests (a test file's own constant of the same name would clash with
// another's in a unity batch).
#pragma once

#include <cstdint>

namespace gb10tune::testing {

// 2^20 bytes.
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
// 2^20 as a double, for figures in MiB with fractions.
inline constexpr double kBytesPerMiB = 1048576.0;
// 2^30 bytes.
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

}  // namespace gb10tune::testing

// Closed form of the fill pattern's checksum (compiled with and without CUDA).
#include "gb10tune/kernels/bandwidth.hpp"

namespace gb10tune::kernels {

namespace {

constexpr std::uint64_t kTwo32 = std::uint64_t{1} << 32;

// sum_{k=0}^{m-1} k, modulo 2^64.
std::uint64_t triangle(std::uint64_t m) {
  return (m % 2 == 0) ? (m / 2) * (m - 1) : m * ((m - 1) / 2);
}

// sum_{k=0}^{m-1} floor(k / 2^32), modulo 2^64.
std::uint64_t wraps_below(std::uint64_t m) {
  const std::uint64_t q = m / kTwo32;
  const std::uint64_t r = m % kTwo32;
  return kTwo32 * triangle(q) + q * r;
}

// sum_{i=0}^{n-1} ((i + seed) mod 2^32), modulo 2^64.
std::uint64_t word_sum(std::uint64_t n, std::uint32_t seed) {
  const std::uint64_t plain = triangle(n) + n * seed;  // sum of (i + seed) without the mod
  const std::uint64_t wraps = wraps_below(n + seed) - wraps_below(seed);
  return plain - kTwo32 * wraps;
}

}  // namespace

std::uint64_t pattern_checksum(std::uint64_t bytes, std::uint32_t seed) {
  const std::uint64_t full_words = bytes / 4;
  const std::uint64_t rest = bytes % 4;
  std::uint64_t sum = word_sum(full_words, seed);
  if (rest != 0) {
    const auto last = static_cast<std::uint32_t>(full_words + seed);
    sum += last & ((std::uint32_t{1} << (8 * rest)) - 1);
  }
  return sum;
}

}  // namespace gb10tune::kernels

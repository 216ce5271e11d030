#include "number_option.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

namespace gb10tune::cli {

CLI::Validator finite_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        double value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, ec] = std::from_chars(input.data(), end, value);
        if (ec != std::errc{} || stop != end || !std::isfinite(value) || value < min ||
            value > max) {
          return fmt::format("'{}' is not a number from {} to {}", input, min, max);
        }
        return {};
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

}  // namespace gb10tune::cli

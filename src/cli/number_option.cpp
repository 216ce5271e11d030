#include "number_option.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>

namespace gb10tune::cli {

CLI::Validator finite_range(double min, double max, std::string hidden_name) {
  return CLI::Validator(
      [min, max, hidden_name](std::string& input) -> std::string {
        double value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, ec] = std::from_chars(input.data(), end, value);
        if (ec != std::errc{} || stop != end || !std::isfinite(value) || value < min ||
            value > max) {
          // CLI11 leaves a hidden option's name out of its message: say it here.
          return fmt::format("{}{}'{}' is not a number from {} to {}", hidden_name,
                             hidden_name.empty() ? "" : ": ", input, min, max);
        }
        return {};
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

}  // namespace gb10tune::cli

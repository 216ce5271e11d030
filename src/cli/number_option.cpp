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
      "");  // --help shows the option's value text (SECONDS, GBPS), not "FLOAT:NUMBER in […]"
}

CLI::Validator integer_range(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        std::int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, ec] = std::from_chars(input.data(), end, value);
        if (ec == std::errc::result_out_of_range ||
            (ec == std::errc{} && stop == end && (value < min || value > max))) {
          return fmt::format("{} is out of range; give an integer from {} to {}", input, min, max);
        }
        if (ec != std::errc{} || stop != end) {
          return fmt::format("{} is not a number; give an integer from {} to {}", input, min, max);
        }
        return {};
      },
      "");
}

}  // namespace gb10tune::cli

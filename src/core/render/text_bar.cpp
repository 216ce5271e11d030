#include "gb10tune/render/text_bar.hpp"

#include <algorithm>

namespace gb10tune::render {

std::string text_bar(double value, double max, int width) {
  if (max <= 0 || value <= 0) {
    return std::string(static_cast<std::size_t>(width), ' ');
  }
  constexpr const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const double cells = std::min(1.0, value / max) * width;
  const int full = static_cast<int>(cells);
  const int eighths = static_cast<int>((cells - full) * 8);
  std::string out;
  for (int i = 0; i < full; ++i) {
    out += "█";
  }
  out += kEighths[eighths];
  return out + std::string(static_cast<std::size_t>(width - full - (eighths > 0 ? 1 : 0)), ' ');
}

}  // namespace gb10tune::render

// A horizontal bar of block characters for text output (terminal tables, Markdown).
#pragma once

#include <string>

namespace gb10tune::render {

// `value` as a share of `max` drawn in `width` cells with eighth-block precision, padded with
// spaces to `width` cells; all spaces when max or value is not positive; capped at full width.
std::string text_bar(double value, double max, int width);

}  // namespace gb10tune::render

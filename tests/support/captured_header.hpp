#pragma once

#include <nlohmann/json.hpp>

#include "support/gguf_writer.hpp"

namespace gb10tune::testing {

// A captured model's GGUF header (the fixtures' "metadata" and "tensors"), ready to write.
GgufWriter captured_header(const nlohmann::json& description);

}  // namespace gb10tune::testing

// The per-device part of the plan's text and JSON (plan_render.cpp's sections for discrete
// GPUs and the host): private to the render module.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render::detail {

// "+1.25 GiB" / "-0.50 GiB".
std::string signed_gib(std::int64_t bytes);
// "blocks 0-30 + output", "the output layer", "no layers".
std::string where_text(const std::vector<std::uint32_t>& layers, bool output);
// One GPU's part as JSON: an element of "devices"' gpus, and of an RPC head's "gpus".
nlohmann::json device_part_json(const plan::DevicePart& g);
// The device plan as the --json document's "devices" object.
nlohmann::json devices_json(const plan::DevicePlan& d);
// The device plan as the text report's per-device table.
std::string devices_text(const plan::DevicePlan& d, const TextStyle& style);

}  // namespace gb10tune::render::detail

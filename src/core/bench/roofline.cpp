#include "gb10tune/bench/roofline.hpp"

namespace gb10tune::bench {

Roofline compute_roofline(const RooflineInputs& inputs, double measured_tps,
                          std::optional<double> mean_accepted_length) {
  Roofline roofline;
  roofline.inputs = inputs;
  roofline.measured_tps = measured_tps;
  roofline.mean_accepted_length = mean_accepted_length.value_or(1.0);
  if (inputs.bytes_per_token == 0) {
    roofline.missing =
        "bytes read per token unknown: start the server with `gb10tune launch` (its record "
        "holds them) or give --model FILE.gguf";
    return roofline;
  }
  if (inputs.bandwidth_bytes_per_second <= 0) {
    roofline.missing =
        "device bandwidth unknown: run `gb10tune probe --quick-bench` once (its result is "
        "saved) or give --bandwidth GBPS";
    return roofline;
  }
  roofline.available = true;
  roofline.step_seconds =
      static_cast<double>(inputs.bytes_per_token) / inputs.bandwidth_bytes_per_second;
  roofline.ceiling_tps = roofline.mean_accepted_length / roofline.step_seconds;
  roofline.percent_of_ceiling = measured_tps / roofline.ceiling_tps * 100.0;
  return roofline;
}

void add_depth(Roofline& roofline, std::uint64_t depth) {
  const RooflineInputs& in = roofline.inputs;
  roofline.at_depth = {};
  if (!roofline.available || !in.cache_bytes_at) {
    return;
  }
  const auto cache = in.cache_bytes_at(depth);
  if (!cache) {
    return;
  }
  DepthRoofline& d = roofline.at_depth;
  d.available = true;
  d.depth = depth;
  d.cache_bytes = *cache;
  d.ceiling_tps = roofline.mean_accepted_length * in.bandwidth_bytes_per_second /
                  static_cast<double>(in.bytes_per_token + *cache);
  d.percent_of_ceiling = roofline.measured_tps / d.ceiling_tps * 100.0;
  if (!in.expect_kind.empty()) {
    d.expect_kind = in.expect_kind;
    d.expect_low_tps = d.ceiling_tps * in.expect_low;
    d.expect_high_tps = d.ceiling_tps * in.expect_high;
  }
}

std::optional<double> device_read_bandwidth(const nlohmann::json& doc) {
  if (!doc.is_object()) {
    return std::nullopt;
  }
  const nlohmann::json* bench = &doc;
  if (const auto it = doc.find("bandwidth"); it != doc.end() && it->is_object()) {
    const auto result = it->find("result");
    if (result == it->end()) {
      return std::nullopt;
    }
    bench = &*result;
  }
  const auto cases = bench->find("cases");
  if (cases == bench->end() || !cases->is_array()) {
    return std::nullopt;
  }
  for (const auto& c : *cases) {
    if (!c.is_object() || c.value("allocator", "") != "device" ||
        c.value("operation", "") != "read" || c.value("status", "") != "ok") {
      continue;
    }
    const auto gbps = c.find("gbps");
    if (gbps == c.end() || !gbps->is_object()) {
      continue;
    }
    const auto median_it = gbps->find("median");
    if (median_it == gbps->end() || !median_it->is_number()) {
      continue;
    }
    const double median = median_it->get<double>();
    if (median > 0) {
      return median * 1e9;
    }
  }
  return std::nullopt;
}

}  // namespace gb10tune::bench

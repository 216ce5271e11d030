// The decode ceiling (K12): decode is bandwidth-bound, every target step reads the weights a
// token needs once, so one step takes at least bytes_per_token / bandwidth and yields
// mean_accepted_length tokens (1 without speculation).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gb10tune::bench {

// The two inputs and where they came from.
struct RooflineInputs {
  std::uint64_t bytes_per_token = 0;      // 0 = unknown
  std::string bytes_source;               // "launch record", "--model FILE"
  double bandwidth_bytes_per_second = 0;  // 0 = unknown
  std::string bandwidth_source;           // "--bandwidth", "probe.json (cudaMalloc read)"
};

struct Roofline {
  bool available = false;
  std::string missing;  // why not, when unavailable: which input and how to give it
  RooflineInputs inputs;
  double step_seconds = 0;          // bytes_per_token / bandwidth: the fastest weight read
  double mean_accepted_length = 1;  // tokens per step (1 without speculation)
  double ceiling_tps = 0;           // mean_accepted_length / step_seconds
  double measured_tps = 0;          // the run's median decode rate
  double percent_of_ceiling = 0;    // measured / ceiling × 100
};

// The ceiling for `inputs` and the measured median decode rate; `mean_accepted_length` is
// the run's median (nullopt without speculation). Unavailable, with the reason, when an
// input is unknown.
Roofline compute_roofline(const RooflineInputs& inputs, double measured_tps,
                          std::optional<double> mean_accepted_length);

// The device-memory read bandwidth (bytes/s) in a saved document: a `gb10tune bench --json`
// result or a probe.json with a quick bench (its bandwidth.result): the median of the
// device (cudaMalloc) read case when it ran ok. nullopt when the document has none.
std::optional<double> device_read_bandwidth(const nlohmann::json& doc);

}  // namespace gb10tune::bench

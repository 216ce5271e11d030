// The decode ceiling (K12): decode is bandwidth-bound, every target step reads the weights a
// token needs once, so one step takes at least bytes_per_token / bandwidth and yields
// mean_accepted_length tokens (1 without speculation).
#pragma once

#include <cstdint>
#include <functional>
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
  // The bytes the KV cache and recurrent state add to a step at a depth (the served model's
  // plan::cache_bytes_read_at_depth); empty when the model's layers are unknown.
  std::function<std::optional<std::uint64_t>(std::uint64_t depth)> cache_bytes_at;
  // What published GB10 runs of such a model reached against the ceiling (launch::
  // decode_expectation): measured/ceiling low…high; kind "" when unknown.
  std::string expect_kind;
  double expect_low = 0;
  double expect_high = 0;
};

// The ceiling where the run decoded: at its median depth, the caches' read added.
struct DepthRoofline {
  bool available = false;
  std::uint64_t depth = 0;        // median over the requests of prompt + half the answer
  std::uint64_t cache_bytes = 0;  // what the caches add to a step there
  double ceiling_tps = 0;
  double percent_of_ceiling = 0;  // measured / ceiling × 100
  std::string expect_kind;        // "" = no expectation
  double expect_low_tps = 0;      // ceiling_tps × the published range
  double expect_high_tps = 0;
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
  DepthRoofline at_depth;
};

// `roofline` at `depth`: the caches' bytes there added to each step (nothing when the inputs
// cannot say them).
void add_depth(Roofline& roofline, std::uint64_t depth);

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

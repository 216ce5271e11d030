// What one chat completion tells about the server's speed, taken as the server reported it
// in its `timings` (K18): nothing here re-times anything. Per request: prefill and decode
// rates, time to first token, and with speculative decoding the draft acceptance (K4).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/bench/statistics.hpp"

namespace gb10tune::bench {

// The `timings` object of one llama-server completion (the same fields as the HTTP module's
// parsed Timings; the runner copies them over). draft_* are absent without drafting.
struct ServerTimings {
  double prompt_n = 0;  // prompt tokens processed (the cached prefix excluded)
  double prompt_ms = 0;
  double prompt_per_second = 0;
  double predicted_n = 0;  // tokens generated
  double predicted_ms = 0;
  double predicted_per_second = 0;
  std::optional<double> cache_n;           // prompt tokens reused from the cache
  std::optional<double> draft_n;           // draft tokens proposed
  std::optional<double> draft_n_accepted;  // draft tokens the target model accepted
};

// The figures a run reports per request.
enum class Metric {
  prefill_tps,           // prompt_per_second
  decode_tps,            // predicted_per_second
  ttft_ms,               // prompt_ms: without streaming, the time to the first token
  acceptance_rate,       // draft_n_accepted / draft_n
  mean_accepted_length,  // predicted_n / (predicted_n - draft_n_accepted)
};

// Every metric, in report order.
inline constexpr std::array<Metric, 5> kMetrics = {Metric::prefill_tps, Metric::decode_tps,
                                                   Metric::ttft_ms, Metric::acceptance_rate,
                                                   Metric::mean_accepted_length};

// How a metric is named and judged.
struct MetricInfo {
  std::string_view id;     // "decode_tps": the JSON key
  std::string_view label;  // "decode": the text label
  std::string_view unit;   // "t/s", "ms", "" (a ratio), "tokens"
  bool higher_is_better = true;
};

// The name, unit and direction of `metric`.
MetricInfo metric_info(Metric metric);

// The metric id back to the metric; nullopt for an unknown id.
std::optional<Metric> parse_metric(std::string_view id);

// The value of `metric` for one completion, or nullopt when the server did not report what
// it needs: no draft fields (no speculation), draft_n 0, or no prompt tokens processed for
// the prefill rate (everything came from the cache).
std::optional<double> metric_value(Metric metric, const ServerTimings& timings);

// Tokens produced per target-model step: every step emits the draft tokens it accepted plus
// one token it sampled itself, so steps = predicted_n - draft_n_accepted and the mean length
// is predicted_n / steps. nullopt without draft fields or when steps would be < 1.
std::optional<double> mean_accepted_length(const ServerTimings& timings);

// One measured completion.
struct RequestSample {
  std::string request;  // the workload request's name
  int session = 0;      // 0-based session (thread) at its concurrency level
  int round = 0;        // 0-based measured round
  ServerTimings timings;
  double client_seconds = 0;  // client wall time of the HTTP exchange (reported separately)
};

// The noise of one metric over a set of samples.
struct MetricSummary {
  Metric metric = Metric::decode_tps;
  std::vector<double> values;  // in sample order; requests without the metric left out
  SampleStats stats;
  MedianInterval interval;  // distribution-free interval of the median: 95%, or less for
                            // few samples (its `confidence` says how much)
  double mad = 0;           // median absolute deviation
};

// Summarizes `values` (any figure: a metric or the totals of a concurrency level).
MetricSummary summarize_metric(Metric metric, std::vector<double> values);

// The summary of `metric` over `samples`.
MetricSummary summarize_samples(Metric metric, std::span<const RequestSample> samples);

}  // namespace gb10tune::bench

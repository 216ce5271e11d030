#include "gb10tune/bench/server_metrics.hpp"

namespace gb10tune::bench {

MetricInfo metric_info(Metric metric) {
  switch (metric) {
    case Metric::prefill_tps:
      return {"prefill_tps", "prefill", "t/s", true};
    case Metric::decode_tps:
      return {"decode_tps", "decode", "t/s", true};
    case Metric::ttft_ms:
      return {"ttft_ms", "time to first token", "ms", false};
    case Metric::acceptance_rate:
      return {"acceptance_rate", "draft acceptance", "", true};
    case Metric::mean_accepted_length:
      return {"mean_accepted_length", "mean accepted length", "tokens", true};
  }
  return {"unknown", "unknown", "", true};
}

std::optional<Metric> parse_metric(std::string_view id) {
  for (Metric metric : kMetrics) {
    if (metric_info(metric).id == id) {
      return metric;
    }
  }
  return std::nullopt;
}

std::optional<double> mean_accepted_length(const ServerTimings& t) {
  if (!t.draft_n || !t.draft_n_accepted || *t.draft_n <= 0) {
    return std::nullopt;
  }
  const double steps = t.predicted_n - *t.draft_n_accepted;
  if (steps < 1) {
    return std::nullopt;
  }
  return t.predicted_n / steps;
}

std::optional<double> metric_value(Metric metric, const ServerTimings& t) {
  switch (metric) {
    case Metric::prefill_tps:
      if (t.prompt_n <= 0) {
        return std::nullopt;
      }
      return t.prompt_per_second;
    case Metric::decode_tps:
      return t.predicted_per_second;
    case Metric::ttft_ms:
      return t.prompt_ms;
    case Metric::acceptance_rate:
      if (!t.draft_n || !t.draft_n_accepted || *t.draft_n <= 0) {
        return std::nullopt;
      }
      return *t.draft_n_accepted / *t.draft_n;
    case Metric::mean_accepted_length:
      return mean_accepted_length(t);
  }
  return std::nullopt;
}

MetricSummary summarize_metric(Metric metric, std::vector<double> values) {
  MetricSummary summary;
  summary.metric = metric;
  summary.values = std::move(values);
  summary.stats = summarize(summary.values);
  summary.interval = median_interval(summary.values);
  summary.mad = median_absolute_deviation(summary.values);
  return summary;
}

MetricSummary summarize_samples(Metric metric, std::span<const RequestSample> samples) {
  std::vector<double> values;
  for (const RequestSample& sample : samples) {
    if (const auto value = metric_value(metric, sample.timings)) {
      values.push_back(*value);
    }
  }
  return summarize_metric(metric, std::move(values));
}

}  // namespace gb10tune::bench

// Rendering `bench server` and `bench compare`: text tables for people, JSON for scripts.
// (The `bench server` JSON document is bench::result_to_json, the same document that --save
// writes.)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/bench/compare.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render {

// The text report: provenance, one row per metric (median, 95% interval, min, max, CV), the
// concurrency table when more than one level ran, and the roofline.
std::string render_server_bench_text(const bench::ServerBenchResult& result,
                                     const TextStyle& style);

// One progress line for stderr: "[c=1  3/21] coding/2: prefill 310.2 t/s, decode 23.5 t/s".
std::string render_round_progress(int concurrency, int round, int rounds, bool warmup,
                                  const std::vector<bench::RequestSample>& samples);

// The comparison as text: one row per metric with both medians and intervals, the change,
// the verdict, then the settings that differ and the K7 warning.
std::string render_comparison_text(const bench::Comparison& comparison, const TextStyle& style);

// The `bench compare` document.
nlohmann::json comparison_to_json(const bench::Comparison& comparison);

// `value` of `metric` with the metric's usual precision ("23.7", "0.672").
std::string format_metric(bench::Metric metric, double value);

}  // namespace gb10tune::render

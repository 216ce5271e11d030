// Rendering a bandwidth run: the full JSON document (every sample, statistics, validation)
// and the text table with bars.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/bench/bandwidth_bench.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render {

// The `bench` document.
nlohmann::json bandwidth_to_json(const bench::BandwidthRun& run);

// The text report: header, one row per case with a bar, scaling check, sweep, verdict.
std::string render_bandwidth_text(const bench::BandwidthRun& run, const TextStyle& style);

// One line for progress on stderr: "[ 3/22] managed read: 162.3 GB/s".
std::string render_progress_line(int index, int total, const bench::CaseOutcome& outcome);

// One line for probe's summary: the cudaMalloc read and the verdict.
std::string render_bandwidth_summary(const bench::BandwidthRun& run);

}  // namespace gb10tune::render

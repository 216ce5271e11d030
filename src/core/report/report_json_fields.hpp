// Private to report/: reading the saved documents' fields without throwing (a member that is
// absent or of another type reads as null, "" or 0), and the pieces of the report's view that
// report_view.cpp assembles.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/report/report_view.hpp"

namespace gb10tune::report {

// `doc[key]` when `doc` is an object holding `key`, else a null value.
const nlohmann::json& field(const nlohmann::json& doc, std::string_view key);
// `doc[index]` when `doc` is an array that long, else a null value.
const nlohmann::json& field(const nlohmann::json& doc, std::size_t index);
// The string, or "".
std::string text(const nlohmann::json& value);
// The number, or 0.
double number(const nlohmann::json& value);
// The number as a byte count (negative and non-numbers: 0).
std::uint64_t bytes(const nlohmann::json& value);
// A number as the document has it ("4", "0.5"), a string as it is, "" for null.
std::string number_text(const nlohmann::json& value);
// The last component of a path ("tiny.gguf"); "" for "".
std::string file_name(std::string_view path);
// {median, median_interval {low, high, confidence}} as the statistics documents have them.
MedianWithInterval median_with_interval(const nlohmann::json& summary);

// The plan's figures as stacked segments (weights, KV cache, recurrent state, MTP, compute,
// runtime, prompt cache, projector, overhead), each > 0; their sum is the plan's total_bytes.
std::vector<MemorySegment> memory_segments(const nlohmann::json& plan);

// "NVIDIA H200 · x86_64 · Ubuntu 24.04.3 LTS" from probe (or bench's device); "" when neither.
std::string machine_line(const ReportBundle& bundle);
// The llama.cpp build the runs used (their build_info, else probe's llama-server version).
std::string build_line(const ReportBundle& bundle);
// The newest date among the parts.
std::string newest_date(const ReportBundle& bundle);
// The gb10tune version that wrote the parts ("0.1.0"), "" when none says.
std::string tool_version(const ReportBundle& bundle);
// Tune's sweep over the knob it measured most, with the start's value; nullopt without a journal
// or without a measured candidate.
std::optional<SweepView> sweep_view(const ReportBundle& bundle);
// Each part `view` lacks, with the command that produces it.
std::vector<MissingPart> missing_parts(const ReportBundle& bundle, const ReportView& view);

}  // namespace gb10tune::report

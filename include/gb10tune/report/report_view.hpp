// The figures of `gb10tune report`, taken from the bundle's saved documents (never measured or
// computed again): what each chart and table of the HTML and Markdown pages shows, and, for each
// part the state directory lacks, the command that produces it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/report/report_bundle.hpp"

namespace gb10tune::report {

// A median with its interval and the interval's confidence (0..1; 0 when unknown).
struct MedianWithInterval {
  double median = 0;
  double low = 0;
  double high = 0;
  double confidence = 0;
};

// One `bench` case: GB/s of read+write traffic (10^9 bytes per second).
struct BandwidthBar {
  std::string label;   // "device read"
  std::string status;  // "ok", "waived", "failed", …
  std::string reason;  // why waived or failed
  double median_gbps = 0;
  double min_gbps = 0;
  double max_gbps = 0;
  double percent_of_peak = 0;
};

// The bandwidth chart: every case of one bench run against the device's nominal peak.
struct BandwidthView {
  std::string source;  // "gb10tune bench" or "gb10tune probe --quick-bench"
  std::string device;  // "NVIDIA H200"
  std::string date;
  double peak_gbps = 0;
  std::string peak_source;
  bool contended = false;
  std::string verdict;
  std::vector<BandwidthBar> bars;
};

// One part of the memory plan.
struct MemorySegment {
  std::string label;  // "weights", "KV cache", …
  std::uint64_t bytes = 0;
};

// The launch's memory plan as one stacked bar against the budget, and what verify measured.
struct MemoryView {
  std::string model;  // the model file's name
  std::string date;   // the launch's date
  std::string backend;
  std::vector<MemorySegment> segments;  // sum = total_bytes
  std::uint64_t total_bytes = 0;
  std::uint64_t load_bytes = 0;               // the plan at load: what an idle server holds
  std::uint64_t with_buffers_bytes = 0;       // and with the buffers batches touch later
  std::optional<std::uint64_t> budget_bytes;  // MemAvailable minus the reserve
  bool fits = true;
  // verify's measurement of the process; only when verify checked the server launch started
  std::optional<std::uint64_t> measured_bytes;
  std::string measured_evidence;  // verify's words for it
};

// One verify finding.
struct CheckView {
  std::string severity;  // "ok", "warn", "fail", "info"
  std::string id;
  std::string fact;  // "K3"
  std::string summary;
  std::string evidence;
  std::string fix;
};

// The last verify.
struct VerifyView {
  std::string verdict;
  std::string server;  // "pid 5646, http://127.0.0.1:18093"
  std::vector<CheckView> checks;
  std::string no_server;     // why verify checked nothing ("no llama-server is running")
  std::string other_server;  // set when verify checked another server than launch started
};

// One saved `bench server` run.
struct RunView {
  std::string name;
  std::string date;
  std::string build;  // the server's build_info
  std::string model;  // the model file's name
  std::string speculative;
  int samples = 0;
  MedianWithInterval decode;   // t/s
  MedianWithInterval prefill;  // t/s
  std::optional<MedianWithInterval> acceptance;
};

// One run's roofline (K12): measured decode as a share of the bandwidth ceiling.
struct RooflineView {
  std::string run;
  double ceiling_tps = 0;
  double measured_tps = 0;
  double percent = 0;
  std::string bytes_source;
  std::string bandwidth_source;
};

// One value of tune's most-walked knob.
struct SweepPoint {
  std::string value;
  MedianWithInterval figure;
  std::string outcome;  // "incumbent" (where the walk began), "better", "not better", …
};

// Tune's sweep: the goal's figure against the knob it walked most.
struct SweepView {
  std::string knob;
  std::string goal;
  std::string build;
  std::string date;
  std::vector<SweepPoint> points;
  int candidates = 0;
};

// A part the state directory lacks: what it is and the command that produces it.
struct MissingPart {
  std::string section;  // the page's section: "machine", "bandwidth", "memory", "verify", …
  std::string part;
  std::string command;
};

// Everything the pages show.
struct ReportView {
  std::string machine;  // "NVIDIA H200 · x86_64 · Ubuntu 24.04.3 LTS"
  std::string build;    // the llama.cpp build the runs used
  std::string date;     // the newest part's date
  std::string tool_version;
  std::optional<BandwidthView> bandwidth;
  std::optional<MemoryView> memory;
  std::optional<VerifyView> verify;
  std::vector<RunView> runs;
  std::vector<RooflineView> rooflines;
  std::optional<SweepView> sweep;
  std::vector<MissingPart> missing;
  std::vector<std::string> problems;
};

// The view of `bundle`. Never fails: what a document lacks is left out and named in `missing`.
ReportView make_report_view(const ReportBundle& bundle);

}  // namespace gb10tune::report

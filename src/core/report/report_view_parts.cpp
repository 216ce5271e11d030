#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/render/tune_render.hpp"
#include "gb10tune/tune/tune_result.hpp"
#include "report_json_fields.hpp"

namespace gb10tune::report {

using nlohmann::json;

const json& field(const json& doc, std::string_view key) {
  static const json null;
  if (!doc.is_object()) {
    return null;
  }
  const auto it = doc.find(std::string(key));
  return it == doc.end() ? null : *it;
}

const json& field(const json& doc, std::size_t index) {
  static const json null;
  return doc.is_array() && index < doc.size() ? doc[index] : null;
}

std::string text(const json& value) {
  return value.is_string() ? value.get<std::string>() : std::string();
}

double number(const json& value) {
  return value.is_number() ? value.get<double>() : 0.0;
}

std::uint64_t bytes(const json& value) {
  if (value.is_number_unsigned()) {
    return value.get<std::uint64_t>();
  }
  return value.is_number() && value.get<double>() > 0
             ? static_cast<std::uint64_t>(value.get<double>())
             : 0;
}

std::string number_text(const json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  return value.is_null() ? std::string() : value.dump();
}

std::string file_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

MedianWithInterval median_with_interval(const json& summary) {
  const json& interval = field(summary, "median_interval");
  return {number(field(summary, "median")), number(field(interval, "low")),
          number(field(interval, "high")), number(field(interval, "confidence"))};
}

std::vector<MemorySegment> memory_segments(const json& plan) {
  const auto sum = [&plan](std::initializer_list<const char*> keys) {
    std::uint64_t total = 0;
    for (const char* key : keys) {
      total += bytes(field(plan, key));
    }
    return total;
  };
  const std::vector<MemorySegment> all = {
      {"weights", sum({"weights_bytes", "repack_bytes"})},
      {"KV cache", sum({"kv_full_bytes", "kv_swa_bytes"})},
      {"recurrent state", sum({"recurrent_bytes"})},
      {"MTP", sum({"mtp_kv_bytes"})},
      {"compute", sum({"compute_bytes", "output_bytes"})},
      {"runtime", sum({"runtime_bytes"})},
      {"prompt cache", sum({"cache_ram_bytes"})},
      {"projector", sum({"projector_bytes", "projector_compute_bytes"})},
      {"overhead", sum({"overhead_bytes", "calibration_bytes"})}};
  std::vector<MemorySegment> out;
  std::uint64_t listed = 0;
  for (const MemorySegment& segment : all) {
    if (segment.bytes > 0) {
      out.push_back(segment);
      listed += segment.bytes;
    }
  }
  const std::uint64_t total = bytes(field(plan, "total_bytes"));
  if (total > listed) {
    out.push_back({"other (not itemized)", total - listed});
  }
  return out;
}

std::string machine_line(const ReportBundle& bundle) {
  std::vector<std::string> parts;
  if (bundle.probe) {
    const json& probe = bundle.probe->doc;
    const json& gpu = field(field(field(probe, "gpu"), "devices"), 0);
    parts.push_back(gpu.is_object() ? text(field(gpu, "name"))
                                    : text(field(field(probe, "machine"), "class")));
    const json& cluster = field(field(field(probe, "cpu"), "clusters"), 0);
    if (cluster.is_object()) {
      parts.push_back(fmt::format("{} × {}", number_text(field(cluster, "cores")),
                                  text(field(cluster, "name"))));
    }
    parts.push_back(text(field(field(probe, "os"), "arch")));
    parts.push_back(text(field(field(probe, "os"), "pretty_name")));
  } else if (bundle.bench) {
    parts.push_back(text(field(field(bundle.bench->doc, "device"), "name")));
  }
  std::erase(parts, std::string());
  return fmt::format("{}", fmt::join(parts, " · "));
}

std::string build_line(const ReportBundle& bundle) {
  for (const SavedDocument& run : bundle.runs) {
    if (auto build = text(field(field(run.doc, "server"), "build_info")); !build.empty()) {
      return "llama.cpp " + build;
    }
  }
  if (bundle.probe) {
    const json& server = field(field(bundle.probe->doc, "llama_servers"), 0);
    if (server.is_object()) {
      return fmt::format("llama.cpp {}, build {}, commit {}", text(field(server, "version")),
                         text(field(server, "build")), text(field(server, "commit")));
    }
  }
  return "";
}

std::string newest_date(const ReportBundle& bundle) {
  std::string newest;
  const auto consider = [&newest](const std::optional<SavedDocument>& part) {
    if (part) {
      newest = std::max(newest, part->saved_at);
    }
  };
  for (const auto* part :
       {&bundle.probe, &bundle.bench, &bundle.launch, &bundle.verify, &bundle.tune}) {
    consider(*part);
  }
  for (const SavedDocument& run : bundle.runs) {
    newest = std::max(newest, run.saved_at);
  }
  return newest;
}

std::string tool_version(const ReportBundle& bundle) {
  for (const auto* part : {&bundle.probe, &bundle.bench, &bundle.verify}) {
    if (*part) {
      return text(field((*part)->doc, "version"));
    }
  }
  return bundle.launch ? text(field(bundle.launch->doc, "gb10tune_version")) : std::string();
}

namespace {

// The journal's measurements read back by the tune's own readers (nullopt: damaged).
std::optional<tune::TuneResult> tune_result_of(const json& doc) {
  tune::TuneResult result;
  std::string error;
  if (field(doc, "start").is_object() &&
      !tune::measurement_from_json(field(doc, "start"), result.start, error)) {
    return std::nullopt;
  }
  for (const json& c : field(doc, "candidates")) {
    tune::CandidateResult candidate;
    if (!tune::candidate_result_from_json(c, candidate, error)) {
      return std::nullopt;
    }
    result.candidates.push_back(std::move(candidate));
  }
  return result;
}

MedianWithInterval measurement_figure(const tune::Measurement& m) {
  return {m.stats.median, m.interval.low, m.interval.high, m.interval.confidence};
}

}  // namespace

std::optional<SweepView> sweep_view(const ReportBundle& bundle) {
  const auto result = bundle.tune ? tune_result_of(bundle.tune->doc) : std::nullopt;
  if (!result) {
    return std::nullopt;
  }
  std::string knob;
  const std::vector<render::SweepRow> rows = render::tune_sweep_rows(*result, knob);
  const json& header = field(bundle.tune->doc, "header");
  SweepView view{knob,
                 text(field(header, "goal")),
                 text(field(header, "build")),
                 text(field(header, "started_at")),
                 {},
                 static_cast<int>(result->candidates.size())};
  for (const render::SweepRow& row : rows) {
    if (row.measured != nullptr) {
      view.points.push_back({number_text(row.value), measurement_figure(*row.measured),
                             row.outcome.empty() ? "incumbent" : row.outcome});
    }
  }
  if (view.points.empty()) {
    return std::nullopt;
  }
  return view;
}

std::vector<MissingPart> missing_parts(const ReportBundle& bundle, const ReportView& view) {
  std::vector<MissingPart> missing;
  const auto lacks = [&missing](bool absent, std::string section, std::string part,
                                std::string command) {
    if (absent) {
      missing.push_back({std::move(section), std::move(part), std::move(command)});
    }
  };
  lacks(!bundle.probe, "machine", "the machine's description", "gb10tune probe");
  lacks(!view.bandwidth, "bandwidth",
        "memory bandwidth per allocation path (gb10tune probe --quick-bench measures a subset)",
        "gb10tune bench");
  lacks(!view.memory, "memory", "the memory plan", "gb10tune launch");
  lacks(view.memory && !view.memory->measured_bytes, "memory",
        "the memory measured after the launch", "gb10tune verify");
  lacks(!view.verify, "verify", "the verify checklist", "gb10tune verify");
  lacks(view.runs.empty(), "runs", "decode and prefill of saved runs",
        "gb10tune bench server --save NAME");
  lacks(view.rooflines.empty(), "roofline",
        "the roofline (decode against the ceiling; bench server computes it once it knows the "
        "device bandwidth, or with --bandwidth GBPS)",
        "gb10tune probe --quick-bench && gb10tune bench server --save NAME");
  lacks(!view.sweep, "tune", "tune's sweep", "gb10tune tune");
  return missing;
}

}  // namespace gb10tune::report

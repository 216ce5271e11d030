#include "gb10tune/report/report_bundle.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <system_error>

#include "gb10tune/render/document.hpp"
#include "gb10tune/tune/tune_journal.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::report {

namespace fs = std::filesystem;

namespace {

// When `file` was last written, as "2026-12-02T03:34:07Z"; "" when that cannot be read.
std::string modified_at(const fs::path& file) {
  std::error_code ec;
  const auto written = fs::last_write_time(file, ec);
  if (ec) {
    return "";
  }
  const auto seconds =
      std::chrono::floor<std::chrono::seconds>(std::chrono::file_clock::to_sys(written));
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", seconds);
}

// Adds `file` as a document when it exists; a file that cannot be read or parsed becomes a
// problem naming the command that writes it again.
std::optional<SavedDocument> load_document(const fs::path& file, std::string name,
                                           std::string_view writer,
                                           std::vector<std::string>& problems) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    return std::nullopt;
  }
  const auto text = read_text_file(file);
  if (!text) {
    problems.push_back(fmt::format("{} could not be read; check its permissions or run {} again.",
                                   file.string(), writer));
    return std::nullopt;
  }
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    problems.push_back(
        fmt::format("{} is not a JSON document (damaged or cut off); run {} again to replace it.",
                    file.string(), writer));
    return std::nullopt;
  }
  return SavedDocument{std::move(name), file, modified_at(file), std::move(doc)};
}

// The saved `bench server` runs, sorted by name.
std::vector<SavedDocument> load_runs(const fs::path& dir, std::vector<std::string>& problems) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<SavedDocument> runs;
  for (const fs::path& file : files) {
    if (auto run = load_document(file, file.stem().string(), "gb10tune bench server --save NAME",
                                 problems)) {
      runs.push_back(std::move(*run));
    }
  }
  return runs;
}

// The tune journal as one document, through the tune's own reader and writers.
std::optional<SavedDocument> load_tune(const fs::path& file, std::vector<std::string>& problems) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    return std::nullopt;
  }
  const auto text = read_text_file(file);
  auto journal = text ? tune::parse_journal(*text, file.string())
                      : Expected<tune::Journal>(Error{file.string() + " could not be read"});
  if (!journal) {
    problems.push_back(journal.error().message);
    return std::nullopt;
  }
  nlohmann::json doc = {{"header", tune::journal_header_line(journal->header)},
                        {"start", nullptr},
                        {"candidates", nlohmann::json::array()}};
  if (journal->start) {
    doc["start"] = tune::measurement_to_json(*journal->start);
  }
  for (const tune::CandidateResult& candidate : journal->candidates) {
    doc["candidates"].push_back(tune::candidate_result_to_json(candidate));
  }
  return SavedDocument{"tune", file, modified_at(file), std::move(doc)};
}

nlohmann::json part_json(const std::optional<SavedDocument>& part) {
  return part ? part->doc : nlohmann::json(nullptr);
}

}  // namespace

Expected<ReportBundle> load_report_bundle(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error{fmt::format("the state directory {} does not exist or is not a directory; run "
                             "gb10tune probe (and launch, bench, verify, bench server --save) "
                             "first, or name another one with --state DIR.",
                             dir.string()),
                 ExitCode::usage};
  }
  ReportBundle bundle;
  bundle.state_dir = dir;
  auto& problems = bundle.problems;
  bundle.probe = load_document(dir / "probe.json", "probe", "gb10tune probe", problems);
  bundle.bench = load_document(dir / "bench.json", "bench", "gb10tune bench", problems);
  bundle.launch = load_document(dir / "launch.json", "launch", "gb10tune launch", problems);
  bundle.verify = load_document(dir / "verify.json", "verify", "gb10tune verify", problems);
  bundle.runs = load_runs(dir / "bench", problems);
  bundle.tune = load_tune(dir / "tune-journal.jsonl", problems);
  return bundle;
}

nlohmann::json bundle_to_json(const ReportBundle& bundle) {
  nlohmann::json doc = render::make_document("report");
  doc["state_dir"] = bundle.state_dir.string();
  doc["probe"] = part_json(bundle.probe);
  doc["bench"] = part_json(bundle.bench);
  doc["launch"] = part_json(bundle.launch);
  doc["verify"] = part_json(bundle.verify);
  doc["runs"] = nlohmann::json::object();
  for (const SavedDocument& run : bundle.runs) {
    doc["runs"][run.name] = run.doc;
  }
  doc["tune"] = part_json(bundle.tune);
  doc["problems"] = bundle.problems;
  return doc;
}

}  // namespace gb10tune::report

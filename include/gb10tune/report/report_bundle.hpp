// What `gb10tune report` gathers from the state directory: each command's saved JSON document as
// that command wrote it (probe, bench, the launch record, the last verify, saved `bench server`
// runs, the tune journal), and the bundle as one JSON document.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::report {

// One saved document: its name ("probe", or a saved run's name), the file it came from, when the
// file was last written (ISO 8601, UTC; "" when unknown), and the document itself.
struct SavedDocument {
  std::string name;
  std::filesystem::path file;
  std::string saved_at;
  nlohmann::json doc;
};

// Everything the state directory holds for a report; a part absent is std::nullopt (or empty).
struct ReportBundle {
  std::filesystem::path state_dir;
  std::optional<SavedDocument> probe;   // probe.json (with the quick bench when it ran)
  std::optional<SavedDocument> bench;   // bench.json: the last full `gb10tune bench`
  std::optional<SavedDocument> launch;  // launch.json: the launch record and its plan
  std::optional<SavedDocument> verify;  // verify.json: the last `gb10tune verify`
  std::vector<SavedDocument> runs;      // bench/*.json: `bench server --save`, by name
  std::optional<SavedDocument> tune;    // tune-journal.jsonl as {header, start, candidates}
  // Parts that exist but could not be read, one sentence each naming the file and the fix.
  std::vector<std::string> problems;
};

// Reads every part `dir` holds; a damaged part goes to `problems`, never stops the others. An
// Error (ExitCode::usage) when `dir` is not a directory, naming it and the commands that fill it.
Expected<ReportBundle> load_report_bundle(const std::filesystem::path& dir);

// The bundle as the `report --json` document: the envelope, "state_dir", one member per part
// (null when absent), "runs" by name, "problems".
nlohmann::json bundle_to_json(const ReportBundle& bundle);

}  // namespace gb10tune::report

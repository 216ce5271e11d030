// The journal of a tune in the state directory (tune-journal.jsonl): one JSON line when the tune
// starts (what it tunes: model, build, goal, workload, the start settings and the knobs), one per
// measurement as it completes. `tune --resume` reads it back and replays it into a new search, so
// nothing measured is measured again.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/tune/tune_result.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::tune {

// What a journal is for: a resume is refused when any of it differs from the new tune's.
struct JournalHeader {
  std::string model_path;
  std::string build;  // the server's build_info
  Goal goal = Goal::decode;
  int concurrency = 1;
  std::string workload;     // the workload's source and a digest of its requests
  std::uint64_t depth = 0;  // the prompt depth decode is measured at (0: the prompts as written)
  nlohmann::json start = nlohmann::json::object();  // the start settings
  std::string started_at;                           // ISO 8601
  Strategy strategy = Strategy::coordinate;         // the search's
};

// One journal line per event.
nlohmann::json journal_header_line(const JournalHeader& header);
nlohmann::json journal_start_line(const Measurement& start);
nlohmann::json journal_candidate_line(const CandidateResult& result);

// A journal read back.
struct Journal {
  JournalHeader header;
  std::optional<Measurement> start;
  std::vector<CandidateResult> candidates;
};

// Parses journal text (JSON lines). A damaged last line (a tune killed mid-write) is dropped;
// any other damage is an Error (ExitCode::usage) naming `source` and the line, and the fix
// (delete the journal to start over).
Expected<Journal> parse_journal(std::string_view text, const std::string& source);

// Why `journal` cannot be resumed by a tune of `header` (the first field that differs, with both
// values), or "" when it can.
std::string resume_mismatch(const Journal& journal, const JournalHeader& header);

// Replays `journal`'s candidates into `search` (each next() must propose the journal's next
// candidate; a different one means the knobs changed: an Error naming it).
Status replay_journal(const Journal& journal, Search& search);

}  // namespace gb10tune::tune

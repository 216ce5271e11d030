#include "gb10tune/tune/tune_journal.hpp"

#include <fmt/format.h>

#include "gb10tune/util/json_field.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

namespace {

using nlohmann::json;

constexpr int kJournalVersion = 1;

bool header_from_json(const json& doc, JournalHeader& header, std::string& error) {
  std::string goal;
  int version = 0;
  if (!get_field(doc, "version", version, error) ||
      !get_field(doc, "model_path", header.model_path, error) ||
      !get_field(doc, "build", header.build, error) || !get_field(doc, "goal", goal, error) ||
      !get_field(doc, "concurrency", header.concurrency, error) ||
      !get_field(doc, "workload", header.workload, error) ||
      !get_field(doc, "start", header.start, error) ||
      !get_field(doc, "started_at", header.started_at, error)) {
    return false;
  }
  if (version != kJournalVersion) {
    error = fmt::format("version {} is not the version this gb10tune writes ({})", version,
                        kJournalVersion);
    return false;
  }
  const auto parsed = parse_goal(goal);
  if (!parsed) {
    error = fmt::format("field 'goal' is not a goal ('{}')", goal);
    return false;
  }
  header.goal = *parsed;
  // Journals written before the grid existed name no strategy: the coordinate search's.
  const std::string strategy = doc.value("strategy", std::string("coordinate"));
  const auto known = parse_strategy(strategy);
  if (!known) {
    error = fmt::format("field 'strategy' is not a strategy ('{}')", strategy);
    return false;
  }
  header.strategy = *known;
  // Journals written before --depth measured the prompts as written.
  const auto depth = doc.find("depth");
  if (depth != doc.end() && !depth->is_number_unsigned()) {
    error = "field 'depth' is not a number of tokens";
    return false;
  }
  header.depth = depth == doc.end() ? 0 : depth->get<std::uint64_t>();
  return true;
}

// Adds one parsed line to `journal`; false with `error` saying what is wrong with it.
bool add_line(const json& doc, Journal& journal, bool& has_header, std::string& error) {
  std::string type;
  if (!get_field(doc, "type", type, error)) {
    return false;
  }
  if (!has_header && type != "header") {
    error = "the first line must be the tune's header";
    return false;
  }
  if (type == "header") {
    if (has_header) {
      error = "a second header (two tunes in one journal)";
      return false;
    }
    has_header = true;
    return header_from_json(doc, journal.header, error);
  }
  if (type == "start") {
    if (journal.start) {
      error = "a second measurement of the start";
      return false;
    }
    Measurement start;
    json measurement;
    if (!get_field(doc, "measurement", measurement, error) ||
        !measurement_from_json(measurement, start, error)) {
      return false;
    }
    journal.start = std::move(start);
    return true;
  }
  if (type == "candidate") {
    if (!journal.start) {
      error = "a candidate before the start's measurement";
      return false;
    }
    CandidateResult result;
    if (!candidate_result_from_json(doc, result, error)) {
      return false;
    }
    journal.candidates.push_back(std::move(result));
    return true;
  }
  error = fmt::format("unknown line type '{}'", type);
  return false;
}

std::string describe(const Candidate& c) {
  return fmt::format("candidate {} ({} {})", c.index, c.setting, c.value.dump());
}

}  // namespace

json journal_header_line(const JournalHeader& header) {
  return {{"type", "header"},
          {"version", kJournalVersion},
          {"model_path", header.model_path},
          {"build", header.build},
          {"goal", to_string(header.goal)},
          {"concurrency", header.concurrency},
          {"workload", header.workload},
          {"depth", header.depth},
          {"start", header.start},
          {"strategy", to_string(header.strategy)},
          {"started_at", header.started_at}};
}

json journal_start_line(const Measurement& start) {
  return {{"type", "start"}, {"measurement", measurement_to_json(start)}};
}

json journal_candidate_line(const CandidateResult& result) {
  json line = candidate_result_to_json(result);
  line["type"] = "candidate";
  return line;
}

Expected<Journal> parse_journal(std::string_view text, const std::string& source) {
  const std::vector<std::string_view> lines = split(text, '\n');
  std::size_t last = lines.size();  // the last line with anything on it
  while (last > 0 && trim(lines[last - 1]).empty()) {
    --last;
  }
  Journal journal;
  bool has_header = false;
  for (std::size_t i = 0; i < last; ++i) {
    if (trim(lines[i]).empty()) {
      continue;
    }
    const json doc = json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    std::string error;
    if (doc.is_discarded()) {
      if (i + 1 == last) {
        break;  // cut off mid-write: that measurement is simply measured again
      }
      error = "not valid JSON";
    } else if (add_line(doc, journal, has_header, error)) {
      continue;
    }
    return Error{fmt::format("{}:{}: the tune journal is damaged ({}); delete {} to start the "
                             "tune over, or run tune without --resume",
                             source, i + 1, error, source),
                 ExitCode::usage};
  }
  if (!has_header) {
    return Error{fmt::format("{}: the tune journal holds no tune (no header line); delete it to "
                             "start the tune over, or run tune without --resume",
                             source),
                 ExitCode::usage};
  }
  return journal;
}

std::string resume_mismatch(const Journal& journal, const JournalHeader& header) {
  const JournalHeader& was = journal.header;
  const auto differs = [](std::string_view field, const auto& before, const auto& now) {
    return fmt::format("{}: the journal's is {}, this tune's is {}", field, before, now);
  };
  if (was.model_path != header.model_path) {
    return differs("model", was.model_path, header.model_path);
  }
  if (was.build != header.build) {
    return differs("build", was.build, header.build);
  }
  if (was.goal != header.goal) {
    return differs("goal", to_string(was.goal), to_string(header.goal));
  }
  if (was.concurrency != header.concurrency) {
    return differs("concurrency", was.concurrency, header.concurrency);
  }
  if (was.workload != header.workload) {
    return differs("workload", was.workload, header.workload);
  }
  if (was.depth != header.depth) {
    return differs("depth", was.depth, header.depth);
  }
  if (was.strategy != header.strategy) {
    return differs("strategy", to_string(was.strategy), to_string(header.strategy));
  }
  if (was.start != header.start) {
    return differs("start settings", was.start.dump(), header.start.dump());
  }
  return "";
}

Status replay_journal(const Journal& journal, Search& search) {
  for (const CandidateResult& result : journal.candidates) {
    const std::optional<Candidate> next = search.next();
    const Candidate& was = result.candidate;
    if (!next || next->setting != was.setting || next->value != was.value ||
        next->settings != was.settings) {
      return Error{fmt::format("the journal's {} is not what the search proposes now ({}): the "
                               "knobs or their values changed since; delete the journal to start "
                               "the tune over, or run tune without --resume",
                               describe(was), next ? describe(*next) : "nothing more"),
                   ExitCode::usage};
    }
    search.record(*next, decision_of(result, journal.header.goal != Goal::prefill));
  }
  return {};
}

}  // namespace gb10tune::tune

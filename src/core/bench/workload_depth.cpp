#include "gb10tune/bench/workload_depth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace gb10tune::bench {

namespace {

// Words of the filler's sentences: plain English, so that a real vocabulary tokenizes it as it
// tokenizes ordinary text.
constexpr std::array<std::string_view, 24> kSubjects = {
    "the harbour office", "the night shift",  "a visiting engineer", "the archive",
    "the second crew",    "the town council", "the weather station", "a delivery driver",
    "the north depot",    "the lab team",     "an old surveyor",     "the ferry captain",
    "the print shop",     "the school board", "the river pilot",     "a junior clerk",
    "the rail yard",      "the clinic",       "the market stall",    "the water works",
    "the mill owner",     "a new apprentice", "the post office",     "the radio club"};
constexpr std::array<std::string_view, 16> kVerbs = {
    "recorded", "counted",  "repaired", "checked",   "moved",   "painted", "listed", "sorted",
    "measured", "replaced", "weighed",  "inspected", "ordered", "stacked", "logged", "cleaned"};
constexpr std::array<std::string_view, 24> kObjects = {"seven crates of copper wire",
                                                       "the broken gate",
                                                       "twelve boxes of letters",
                                                       "the tide tables",
                                                       "a pallet of bricks",
                                                       "the old boiler",
                                                       "three spare pumps",
                                                       "the station clock",
                                                       "forty sacks of grain",
                                                       "the signal lamps",
                                                       "a roll of canvas",
                                                       "the survey maps",
                                                       "nine barrels of oil",
                                                       "the loading crane",
                                                       "the winter rota",
                                                       "two new ladders",
                                                       "the cellar door",
                                                       "a shelf of ledgers",
                                                       "the rain gauge",
                                                       "eleven coils of rope",
                                                       "the spare tyres",
                                                       "the fuse box",
                                                       "a stack of timber",
                                                       "the visitor book"};
constexpr std::array<std::string_view, 12> kTimes = {
    "before noon",      "on Monday",           "after the storm", "at first light",
    "during the audit", "late in the evening", "on the quay",     "in the rain",
    "before the tide",  "after lunch",         "on Friday",       "by the north gate"};

// The filler text, generated as far as asked: numbered sentences chosen by a fixed linear
// congruential sequence.
class FillerText {
 public:
  // The first `chars` characters, cut back to the end of a word.
  std::string prefix(std::size_t chars) {
    while (m_text.size() <= chars) {
      add_sentence();
    }
    std::size_t end = chars;
    while (end > 0 && m_text[end] != ' ') {
      --end;
    }
    while (end > 0 && m_text[end - 1] == ' ') {
      --end;
    }
    return m_text.substr(0, end);
  }

 private:
  std::uint32_t next() {
    m_state = m_state * 1664525u + 1013904223u;
    return m_state >> 8;
  }
  void add_sentence() {
    ++m_sentence;
    const auto subject = kSubjects[next() % kSubjects.size()];
    const auto verb = kVerbs[next() % kVerbs.size()];
    const auto object = kObjects[next() % kObjects.size()];
    const auto time = kTimes[next() % kTimes.size()];
    m_text += fmt::format("Note {}: {} {} {} {}. ", m_sentence, subject, verb, object, time);
  }

  std::string m_text;
  std::uint32_t m_state = 20261204u;
  std::size_t m_sentence = 0;
};

// `body` with `filler` and a blank line before its first message's content.
nlohmann::json with_filler(const nlohmann::json& body, const std::string& filler) {
  nlohmann::json deeper = body;
  auto& content = deeper["messages"][0]["content"];
  content = filler + "\n\n" + content.get<std::string>();
  return deeper;
}

struct Sized {
  nlohmann::json body;
  std::uint64_t tokens = 0;
  std::size_t added_chars = 0;
};

// The request's max_tokens (0 when it names none).
std::uint64_t max_tokens_of(const WorkloadRequest& request) {
  const auto it = request.body.find("max_tokens");
  if (it == request.body.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    return 0;
  }
  return static_cast<std::uint64_t>(it->get<std::int64_t>());
}

// The body of `request` with the filler that brings its prompt to [depth - tolerance, depth]
// tokens: a secant step on the filler's characters per token, and bisection between the longest
// filler known to fit and the shortest known not to.
Expected<Sized> size_filler(const WorkloadRequest& request, std::uint64_t depth,
                            std::uint64_t tolerance, double& chars_per_token, FillerText& text,
                            const PromptTokenCounter& count) {
  constexpr int kMaxTries = 24;
  constexpr double kMostCharsPerToken = 64;
  const std::uint64_t shallow = request.prompt_tokens;
  const double aim = static_cast<double>(depth - shallow) - static_cast<double>(tolerance) / 2;
  std::optional<Sized> best;
  std::size_t fits = 0;                 // characters known to fit
  std::optional<std::size_t> too_deep;  // characters known not to
  double guess = std::max(1.0, aim * chars_per_token);
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    std::size_t chars = static_cast<std::size_t>(guess);
    if (too_deep && (chars <= fits || chars >= *too_deep)) {
      chars = fits + (*too_deep - fits) / 2;
    }
    chars = std::max(chars, fits + 1);
    const std::string filler = text.prefix(chars);
    nlohmann::json body = with_filler(request.body, filler);
    const auto counted = count(body);
    if (!counted) {
      return counted.error();
    }
    if (*counted <= depth) {
      if (!best || *counted > best->tokens) {
        best = Sized{std::move(body), *counted, filler.size() + 2};
      }
      fits = std::max(fits, chars);
      if (*counted + tolerance >= depth) {
        return std::move(*best);
      }
    } else {
      too_deep = too_deep ? std::min(*too_deep, chars) : chars;
    }
    if (*counted > shallow && !filler.empty()) {
      chars_per_token =
          static_cast<double>(filler.size()) / static_cast<double>(*counted - shallow);
    }
    // No vocabulary packs more than a few dozen characters into a token: a count that barely
    // moved must not make the next filler megabytes long.
    chars_per_token = std::min(chars_per_token, kMostCharsPerToken);
    guess = std::max(1.0, aim * chars_per_token);
    if (too_deep && *too_deep <= fits + 1) {
      break;  // one character apart: the closest a word boundary gets
    }
  }
  if (best) {
    return std::move(*best);
  }
  return Error{fmt::format("could not size a filler that brings request {} ({} tokens) to a depth "
                           "of {} tokens with the server's token counts",
                           request.name, shallow, depth),
               ExitCode::failed};
}

}  // namespace

std::string depth_filler(std::size_t chars) {
  FillerText text;
  return text.prefix(chars);
}

std::uint64_t deepest_fitting(const Workload& workload, std::uint64_t slot_ctx) {
  std::uint64_t largest = 0;
  for (const WorkloadRequest& request : workload.requests) {
    largest = std::max(largest, max_tokens_of(request));
  }
  return slot_ctx > largest ? slot_ctx - largest : 0;
}

std::uint64_t default_depth(const Workload& workload, std::uint64_t slot_ctx) {
  if (!workload.counted) {
    return 0;
  }
  std::uint64_t deepest = 0;
  for (const WorkloadRequest& request : workload.requests) {
    deepest = std::max(deepest, request.prompt_tokens);
  }
  return slot_ctx > 0 ? std::min(deepest, deepest_fitting(workload, slot_ctx)) : deepest;
}

Status deepen_workload(Workload& workload, std::uint64_t depth, const PromptTokenCounter& count) {
  if (!workload.counted || !count) {
    return Error{fmt::format("the prompts of {} were not counted by the server, so a depth "
                             "filler cannot be sized",
                             workload.source),
                 ExitCode::failed};
  }
  const std::uint64_t tolerance = std::max<std::uint64_t>(8, depth / 100);
  const PromptTokenCounter remembered = remember_counts(count);
  FillerText text;
  double chars_per_token = 4.0;
  std::vector<Sized> deeper(workload.requests.size());
  for (std::size_t i = 0; i < workload.requests.size(); ++i) {
    const WorkloadRequest& request = workload.requests[i];
    if (request.prompt_tokens + tolerance >= depth) {
      continue;
    }
    const auto& messages = request.body.find("messages");
    if (messages == request.body.end() || !messages->is_array() || messages->empty() ||
        !(*messages)[0].contains("content") || !(*messages)[0]["content"].is_string()) {
      return Error{fmt::format("request {} of {}: its first message's content is not text, so no "
                               "depth filler can be put before it; give --depth 0 to measure the "
                               "workload as written",
                               request.name, workload.source),
                   ExitCode::failed};
    }
    auto sized = size_filler(request, depth, tolerance, chars_per_token, text, remembered);
    if (!sized) {
      return sized.error();
    }
    deeper[i] = std::move(*sized);
  }
  for (std::size_t i = 0; i < deeper.size(); ++i) {
    if (deeper[i].tokens > 0) {
      workload.requests[i].body = std::move(deeper[i].body);
      workload.requests[i].prompt_tokens = deeper[i].tokens;
      workload.requests[i].context_chars += deeper[i].added_chars;
    }
  }
  return {};
}

}  // namespace gb10tune::bench

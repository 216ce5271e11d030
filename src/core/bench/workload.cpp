#include "gb10tune/bench/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "gb10tune/util/strings.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::bench {

// The text of configs/workloads/default.jsonl, generated at configure time.
extern const std::string_view kDefaultWorkloadText;

namespace {

constexpr int kDefaultMaxTokens = 256;

Error workload_error(const std::string& source, std::size_t line, const std::string& why) {
  return Error{fmt::format("workload {} line {}: {}; each line is one JSON object: a "
                           "conversation {{\"conversation\", \"turns\": [{{\"user\", "
                           "\"assistant\"}}, …]}} or a request {{\"messages\": […], "
                           "\"max_tokens\": N}} (see docs/server-bench.md)",
                           source, line, why),
               ExitCode::usage};
}

// max_tokens of `object`, or `fallback`; an empty string on success, else why not.
std::string read_max_tokens(const nlohmann::json& object, int fallback, int& out) {
  out = fallback;
  const auto it = object.find("max_tokens");
  if (it == object.end()) {
    return {};
  }
  if (!it->is_number_integer() || it->get<long long>() <= 0 || it->get<long long>() > 1000000) {
    return "\"max_tokens\" must be a positive integer";
  }
  out = it->get<int>();
  return {};
}

std::size_t content_chars(const nlohmann::json& messages) {
  std::size_t chars = 0;
  for (const auto& message : messages) {
    const auto it = message.find("content");
    if (it != message.end() && it->is_string()) {
      chars += it->get_ref<const std::string&>().size();
    }
  }
  return chars;
}

std::string check_messages(const nlohmann::json& messages) {
  if (!messages.is_array() || messages.empty()) {
    return "\"messages\" must be a non-empty array";
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& message = messages[i];
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string() ||
        !message.contains("content")) {
      return fmt::format("message {} needs a string \"role\" and a \"content\"", i + 1);
    }
  }
  return {};
}

std::string add_request(const nlohmann::json& line, std::size_t line_no, Workload& out) {
  if (const std::string why = check_messages(line["messages"]); !why.empty()) {
    return why;
  }
  int max_tokens = 0;
  if (const std::string why = read_max_tokens(line, kDefaultMaxTokens, max_tokens); !why.empty()) {
    return why;
  }
  WorkloadRequest request;
  request.name = fmt::format("line {}", line_no);
  if (const auto it = line.find("name"); it != line.end()) {
    if (!it->is_string()) {
      return "\"name\" must be a string";
    }
    request.name = it->get<std::string>();
  }
  request.body = line;
  request.body.erase("name");
  request.body.erase("stream");
  request.body["max_tokens"] = max_tokens;
  request.context_chars = content_chars(line["messages"]);
  out.requests.push_back(std::move(request));
  ++out.conversations;
  return {};
}

std::string add_conversation(const nlohmann::json& line, Workload& out) {
  const auto& name = line["conversation"];
  if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
    return "\"conversation\" must be a non-empty string";
  }
  int max_tokens = 0;
  if (const std::string why = read_max_tokens(line, kDefaultMaxTokens, max_tokens); !why.empty()) {
    return why;
  }
  const auto turns = line.find("turns");
  if (turns == line.end() || !turns->is_array() || turns->empty()) {
    return "a conversation needs a non-empty \"turns\" array";
  }
  nlohmann::json history = nlohmann::json::array();
  if (const auto system = line.find("system"); system != line.end()) {
    if (!system->is_string()) {
      return "\"system\" must be a string";
    }
    history.push_back({{"role", "system"}, {"content", *system}});
  }
  for (std::size_t i = 0; i < turns->size(); ++i) {
    const auto& turn = (*turns)[i];
    if (!turn.is_object() || !turn.contains("user") || !turn["user"].is_string()) {
      return fmt::format("turn {} needs a string \"user\"", i + 1);
    }
    int turn_tokens = 0;
    if (const std::string why = read_max_tokens(turn, max_tokens, turn_tokens); !why.empty()) {
      return fmt::format("turn {}: {}", i + 1, why);
    }
    history.push_back({{"role", "user"}, {"content", turn["user"]}});
    WorkloadRequest request;
    request.name = fmt::format("{}/{}", name.get<std::string>(), i + 1);
    request.body = {{"messages", history}, {"max_tokens", turn_tokens}};
    // The conversation's other fields (sampling, ignore_eos …) go with every turn, as a
    // single request's do.
    for (const auto& [key, value] : line.items()) {
      if (key != "conversation" && key != "system" && key != "turns" && key != "max_tokens" &&
          key != "stream") {
        request.body[key] = value;
      }
    }
    request.context_chars = content_chars(history);
    out.requests.push_back(std::move(request));
    const auto assistant = turn.find("assistant");
    if (assistant == turn.end()) {
      if (i + 1 != turns->size()) {
        return fmt::format(
            "turn {} has no \"assistant\" reply, which later turns need as "
            "history (only the last turn may leave it out)",
            i + 1);
      }
      break;
    }
    if (!assistant->is_string()) {
      return fmt::format("turn {}: \"assistant\" must be a string", i + 1);
    }
    history.push_back({{"role", "assistant"}, {"content", *assistant}});
  }
  ++out.conversations;
  return {};
}

}  // namespace

Expected<Workload> parse_workload(std::string_view text, const std::string& source) {
  Workload workload;
  workload.source = source;
  std::size_t line_no = 0;
  for (std::string_view raw : split(text, '\n')) {
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) {
      continue;
    }
    const auto doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      return workload_error(source, line_no, "not a JSON object");
    }
    std::string why;
    if (doc.contains("conversation")) {
      why = add_conversation(doc, workload);
    } else if (doc.contains("messages")) {
      why = add_request(doc, line_no, workload);
    } else {
      why = "neither \"conversation\" nor \"messages\"";
    }
    if (!why.empty()) {
      return workload_error(source, line_no, why);
    }
  }
  if (workload.requests.empty()) {
    return Error{fmt::format("workload {} holds no requests; give at least one JSON line (see "
                             "docs/server-bench.md)",
                             source),
                 ExitCode::usage};
  }
  return workload;
}

const Workload& default_workload() {
  static const Workload workload = [] {
    auto parsed = parse_workload(kDefaultWorkloadText, "built-in default workload");
    if (!parsed) {
      // The shipped file is checked by a test; reaching this is a build bug.
      throw std::logic_error(parsed.error().message);
    }
    return std::move(parsed).value();
  }();
  return workload;
}

std::string request_json(const WorkloadRequest& request) {
  nlohmann::json body = request.body;
  body["stream"] = false;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::uint64_t estimated_slot_tokens(const WorkloadRequest& request) {
  constexpr std::uint64_t kCharsPerToken = 4;
  constexpr std::uint64_t kTemplateTokensPerMessage = 8;
  std::uint64_t messages = 0;
  if (const auto it = request.body.find("messages"); it != request.body.end() && it->is_array()) {
    messages = it->size();
  }
  std::uint64_t max_tokens = 0;
  if (const auto it = request.body.find("max_tokens");
      it != request.body.end() && it->is_number_integer() && it->get<std::int64_t>() > 0) {
    max_tokens = static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  return (request.context_chars + kCharsPerToken - 1) / kCharsPerToken +
         messages * kTemplateTokensPerMessage + max_tokens;
}

std::uint64_t slot_tokens(const WorkloadRequest& request) {
  if (request.prompt_tokens == 0) {
    return estimated_slot_tokens(request);
  }
  std::uint64_t max_tokens = 0;
  if (const auto it = request.body.find("max_tokens");
      it != request.body.end() && it->is_number_integer() && it->get<std::int64_t>() > 0) {
    max_tokens = static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  return request.prompt_tokens + max_tokens;
}

PromptTokenCounter remember_counts(PromptTokenCounter count) {
  if (!count) {
    return count;
  }
  struct Memory {
    std::mutex mutex;
    std::map<std::string, std::uint64_t> counts;
  };
  auto memory = std::make_shared<Memory>();
  return [memory, count = std::move(count)](const nlohmann::json& body) -> Expected<std::uint64_t> {
    const std::string key = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    {
      const std::lock_guard<std::mutex> lock(memory->mutex);
      if (const auto it = memory->counts.find(key); it != memory->counts.end()) {
        return it->second;
      }
    }
    auto counted = count(body);
    if (counted) {
      const std::lock_guard<std::mutex> lock(memory->mutex);
      memory->counts.emplace(key, *counted);
    }
    return counted;
  };
}

std::string count_workload_tokens(Workload& workload, const PromptTokenCounter& count) {
  constexpr const char* kEstimated =
      "request sizes are estimated at 4 characters per token, which byte-level vocabularies "
      "exceed: a request may still fail with HTTP 400 (--max-context leaves the longer ones out)";
  workload.counted = false;
  for (WorkloadRequest& request : workload.requests) {
    request.prompt_tokens = 0;
  }
  if (!count) {
    return fmt::format("the server cannot count tokens here; {}", kEstimated);
  }
  std::vector<std::uint64_t> counts;
  counts.reserve(workload.requests.size());
  for (const WorkloadRequest& request : workload.requests) {
    auto counted = count(request.body);
    if (!counted) {
      return fmt::format("the server did not count the prompt tokens of request {} ({}); {}",
                         request.name, counted.error().message, kEstimated);
    }
    // Even an empty prompt is at least one token to the server (BOS or the template).
    counts.push_back(std::max<std::uint64_t>(*counted, 1));
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    workload.requests[i].prompt_tokens = counts[i];
  }
  workload.counted = true;
  return {};
}

Status check_workload_fits(const Workload& workload, std::uint64_t slot_ctx) {
  const WorkloadRequest* longest = nullptr;
  std::uint64_t most = 0;
  std::size_t too_long = 0;
  for (const WorkloadRequest& request : workload.requests) {
    const std::uint64_t tokens = slot_tokens(request);
    too_long += tokens > slot_ctx ? 1 : 0;
    if (longest == nullptr || tokens > most) {
      longest = &request;
      most = tokens;
    }
  }
  if (longest == nullptr || most <= slot_ctx) {
    return {};
  }
  return Error{fmt::format(
      "request {} needs {}{} tokens (its prompt{} and max_tokens) but the server's slot holds {} "
      "(/props n_ctx per slot); {} of {} requests of {} would fail with HTTP 400. Trim the "
      "workload to the slot with --max-context {}, or give each slot more context (a larger -c, "
      "or fewer slots with -np)",
      longest->name, longest->prompt_tokens > 0 ? "" : "about ", most,
      longest->prompt_tokens > 0 ? ", counted by the server's tokenizer," : "", slot_ctx, too_long,
      workload.requests.size(), workload.source, slot_ctx)};
}

std::size_t trim_workload(Workload& workload, std::uint64_t max_tokens) {
  const std::size_t before = workload.requests.size();
  std::erase_if(workload.requests, [max_tokens](const WorkloadRequest& request) {
    return slot_tokens(request) > max_tokens;
  });
  return before - workload.requests.size();
}

Expected<Workload> load_workload(const std::string& prompts) {
  if (prompts.empty()) {
    return default_workload();
  }
  const auto text = read_text_file(prompts);
  if (!text) {
    return Error{fmt::format("--prompts {}: cannot read the file; give a JSON-lines workload "
                             "(see docs/server-bench.md)",
                             prompts),
                 ExitCode::usage};
  }
  return parse_workload(*text, prompts);
}

Expected<std::vector<std::string>> fit_workload(Workload& workload, std::uint64_t max_context,
                                                std::uint64_t slot_ctx) {
  std::vector<std::string> notes;
  const char* how = workload.counted ? "counted by the server's tokenizer" : "estimated";
  if (max_context > 0) {
    const std::size_t dropped = trim_workload(workload, max_context);
    if (workload.requests.empty()) {
      return Error{fmt::format("--max-context {}: every request of {} needs more tokens ({}); "
                               "give a larger limit",
                               max_context, workload.source, how),
                   ExitCode::usage};
    }
    if (dropped > 0) {
      notes.push_back(
          fmt::format("--max-context {}: {} of {} requests left out (longer than {} tokens, {})",
                      max_context, dropped, dropped + workload.requests.size(), max_context, how));
      workload.source += fmt::format(" (--max-context {})", max_context);
    }
  }
  if (slot_ctx > 0) {
    std::uint64_t shortest = 0;
    for (const WorkloadRequest& request : workload.requests) {
      const std::uint64_t tokens = slot_tokens(request);
      shortest = shortest == 0 ? tokens : std::min(shortest, tokens);
    }
    const std::size_t before = workload.requests.size();
    const std::size_t dropped = trim_workload(workload, slot_ctx);
    if (workload.requests.empty()) {
      return Error{
          fmt::format("no request of {} fits the server's slot of {} tokens (/props n_ctx per "
                      "slot): the shortest needs {} (its prompt, {}, and max_tokens). Give each "
                      "slot more context (gb10tune launch with a larger -c, or fewer slots with "
                      "-np), or a shorter workload with --prompts",
                      workload.source, slot_ctx, shortest, how),
          ExitCode::failed};
    }
    if (dropped > 0) {
      notes.push_back(fmt::format(
          "{} of {} requests left out: longer than the server's slot of {} tokens (their "
          "prompt, {}, and max_tokens; they would fail with HTTP 400); give each slot more "
          "context to keep them",
          dropped, before, slot_ctx, how));
      workload.source += fmt::format(" (slot {})", slot_ctx);
    }
  }
  return notes;
}

Expected<std::vector<std::string>> fit_workload_to_server(Workload& workload,
                                                          std::uint64_t max_context,
                                                          std::uint64_t slot_ctx,
                                                          const PromptTokenCounter& count) {
  std::vector<std::string> notes;
  if (std::string fallback = count_workload_tokens(workload, count); !fallback.empty()) {
    notes.push_back(std::move(fallback));
  }
  auto fitted = fit_workload(workload, max_context, slot_ctx);
  if (!fitted) {
    return fitted.error();
  }
  notes.insert(notes.end(), fitted->begin(), fitted->end());
  return notes;
}

}  // namespace gb10tune::bench

// bench::connect_http over the HTTP client (http/http_client.hpp) and llama-server's
// typed answers (http/server_api.hpp).
#include <fmt/format.h>

#include <chrono>

#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/http/http_client.hpp"
#include "gb10tune/http/server_api.hpp"

namespace gb10tune::bench {

namespace {

constexpr std::chrono::milliseconds kProbeTimeout{5000};

Error not_answering(const http::Url& url, const std::string& why) {
  return Error{fmt::format("no llama-server answers at {} ({}); start it (`gb10tune launch`) or "
                           "give the right --url",
                           url.to_string(), why),
               ExitCode::failed};
}

Expected<ServerInfo> read_info(const http::Url& url) {
  const auto health = http::http_get(url, "/health", kProbeTimeout, http::kSmallAnswerBytes);
  if (!health) {
    return not_answering(url, health.error().message);
  }
  switch (http::classify_health(*health)) {
    case http::HealthState::ready:
      break;
    case http::HealthState::loading:
      return Error{fmt::format("the llama-server at {} is still loading its model (/health "
                               "answers {}); wait until it is ready and run the bench again",
                               url.to_string(), health->status),
                   ExitCode::failed};
    case http::HealthState::error:
      return Error{fmt::format("the llama-server at {} reports an error on /health (HTTP {}): "
                               "{}",
                               url.to_string(), health->status, health->body.substr(0, 200)),
                   ExitCode::failed};
  }
  const auto response = http::http_get(url, "/props", kProbeTimeout);
  if (!response) {
    return not_answering(url, response.error().message);
  }
  if (response->status != 200) {
    return Error{fmt::format("{}/props answered HTTP {}; a llama-server started with "
                             "--no-endpoint-props cannot be benchmarked with its provenance: "
                             "start it without that flag",
                             url.to_string(), response->status),
                 ExitCode::failed};
  }
  const auto props = http::parse_props(response->body);
  if (!props) {
    return props.error();
  }
  ServerInfo info;
  info.model_path = props->model_path;
  info.build_info = props->build_info;
  info.total_slots = props->total_slots;
  info.n_ctx_per_slot = props->n_ctx_per_slot;
  info.props = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (info.props.is_discarded()) {
    info.props = nlohmann::json::object();
  }
  // What the server runs (its /props only shows request defaults); /slots may be off.
  if (const auto answer = http::http_get(url, "/slots", kProbeTimeout);
      answer && answer->status == 200) {
    if (const auto slots = http::parse_slots(answer->body)) {
      for (const http::SlotInfo& slot : *slots) {
        info.slots_reported += slot.speculative ? 1 : 0;
        info.slots_speculative += slot.speculative.value_or(false) ? 1 : 0;
      }
    }
  }
  return info;
}

Expected<CompletionReply> complete(const http::Url& url, const std::string& body,
                                   std::chrono::milliseconds timeout) {
  const auto started = std::chrono::steady_clock::now();
  const auto response = http::http_post_json(url, "/v1/chat/completions", body, timeout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!response) {
    return not_answering(url, response.error().message);
  }
  if (response->status != 200) {
    return Error{fmt::format("{}/v1/chat/completions answered HTTP {}: {}", url.to_string(),
                             response->status, response->body.substr(0, 300)),
                 ExitCode::failed};
  }
  const auto timings = http::parse_completion_timings(response->body);
  if (!timings) {
    return timings.error();
  }
  CompletionReply reply;
  reply.client_seconds = seconds;
  reply.timings.prompt_n = timings->prompt_n;
  reply.timings.prompt_ms = timings->prompt_ms;
  reply.timings.prompt_per_second = timings->prompt_per_second;
  reply.timings.predicted_n = timings->predicted_n;
  reply.timings.predicted_ms = timings->predicted_ms;
  reply.timings.predicted_per_second = timings->predicted_per_second;
  reply.timings.cache_n = timings->cache_n;
  reply.timings.draft_n = timings->draft_n;
  reply.timings.draft_n_accepted = timings->draft_n_accepted;
  return reply;
}

// POSTs `body` to `path`; the answer's body, or an Error naming the endpoint.
Expected<std::string> post_for_body(const http::Url& url, std::string_view path,
                                    const nlohmann::json& body, std::chrono::milliseconds timeout) {
  const auto response = http::http_post_json(
      url, path, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), timeout);
  if (!response) {
    return Error{fmt::format("{}{}: {}", url.to_string(), path, response.error().message),
                 ExitCode::failed};
  }
  if (response->status != 200) {
    return Error{fmt::format("{}{} answered HTTP {}: {}", url.to_string(), path, response->status,
                             response->body.substr(0, 200)),
                 ExitCode::failed};
  }
  return response->body;
}

// The prompt tokens of a chat request as the server counts them: its chat template applied
// (/apply-template takes the request as /v1/chat/completions does), then its tokenizer with the
// special tokens a completion adds (BOS).
Expected<std::uint64_t> count_prompt(const http::Url& url, const nlohmann::json& request,
                                     std::chrono::milliseconds timeout) {
  nlohmann::json body = request;
  body.erase("stream");
  const auto templated = post_for_body(url, "/apply-template", body, timeout);
  if (!templated) {
    return templated.error();
  }
  const auto prompt = http::parse_applied_template(*templated);
  if (!prompt) {
    return prompt.error();
  }
  const auto tokenized = post_for_body(
      url, "/tokenize", {{"content", *prompt}, {"add_special", true}, {"parse_special", true}},
      timeout);
  if (!tokenized) {
    return tokenized.error();
  }
  const auto tokens = http::parse_token_count(*tokenized);
  if (!tokens) {
    return tokens.error();
  }
  return static_cast<std::uint64_t>(*tokens);
}

}  // namespace

Expected<ServerEndpoint> connect_http(const std::string& text, std::chrono::milliseconds timeout) {
  auto url = http::parse_url(text);
  if (!url) {
    return Error{fmt::format("--url {}: {}", text, url.error().message), ExitCode::usage};
  }
  ServerEndpoint endpoint;
  endpoint.info = [url = *url] { return read_info(url); };
  endpoint.complete = [url = *url, timeout](const std::string& body) {
    return complete(url, body, timeout);
  };
  endpoint.count_prompt = [url = *url, timeout](const nlohmann::json& request) {
    return count_prompt(url, request, timeout);
  };
  return endpoint;
}

}  // namespace gb10tune::bench

#include "gb10tune/verify/http_server_probe.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/http/server_api.hpp"

namespace gb10tune::verify {

Expected<PropsAnswer> read_props_answer(std::string_view body) {
  auto props = http::parse_props(body);
  if (!props) {
    return props.error();
  }
  return PropsAnswer{props->n_ctx_per_slot, props->total_slots, props->model_path,
                     props->build_info, props->speculative_types};
}

Expected<std::vector<SlotAnswer>> read_slots_answer(std::string_view body) {
  auto slots = http::parse_slots(body);
  if (!slots) {
    return slots.error();
  }
  std::vector<SlotAnswer> out;
  for (const http::SlotInfo& slot : *slots) {
    out.push_back({slot.id, slot.n_ctx, slot.speculative, slot.is_processing});
  }
  return out;
}

namespace {

class HttpServerProbe final : public ServerProbe {
 public:
  HttpServerProbe(Expected<http::Url> url, std::chrono::milliseconds timeout,
                  std::chrono::milliseconds smoke_timeout)
      : m_url(std::move(url)), m_timeout(timeout), m_smoke_timeout(smoke_timeout) {}

  HealthAnswer health() override {
    HealthAnswer answer;
    if (!m_url) {
      answer.detail = m_url.error().message;
      return answer;
    }
    const auto response = http::http_get(*m_url, "/health", m_timeout, http::kSmallAnswerBytes);
    if (!response) {
      answer.detail = response.error().message;
      return answer;
    }
    answer.status = response->status;
    switch (http::classify_health(*response)) {
      case http::HealthState::ready:
        answer.state = HealthState::ready;
        break;
      case http::HealthState::loading:
        answer.state = HealthState::loading;
        break;
      case http::HealthState::error:
        answer.state = HealthState::error;
        answer.detail = response->body.substr(0, 200);
        break;
    }
    return answer;
  }

  Expected<PropsAnswer> props() override {
    auto body = get("/props");
    if (!body) {
      return body.error();
    }
    return read_props_answer(*body);
  }

  Expected<std::vector<SlotAnswer>> slots() override {
    auto body = get("/slots");
    if (!body) {
      return body.error();
    }
    return read_slots_answer(*body);
  }

  Expected<SmokeTimings> smoke() override {
    if (!m_url) {
      return m_url.error();
    }
    const nlohmann::json request = {
        {"messages", {{{"role", "user"}, {"content", "Reply with the single word OK."}}}},
        {"max_tokens", 16},
        {"temperature", 0},
        {"stream", false}};
    const auto response =
        http::http_post_json(*m_url, "/v1/chat/completions", request.dump(), m_smoke_timeout);
    if (!response) {
      return response.error();
    }
    if (response->status != 200) {
      return Error{fmt::format("POST {}/v1/chat/completions answered {}: {}", m_url->to_string(),
                               response->status, response->body.substr(0, 200))};
    }
    auto timings = http::parse_completion_timings(response->body);
    if (!timings) {
      return timings.error();
    }
    return SmokeTimings{timings->prompt_n,    timings->prompt_per_second,
                        timings->predicted_n, timings->predicted_per_second,
                        timings->draft_n,     timings->draft_n_accepted};
  }

 private:
  // The body of a 200 answer to GET `path`; an Error naming the URL otherwise.
  Expected<std::string> get(std::string_view path) {
    if (!m_url) {
      return m_url.error();
    }
    const auto response = http::http_get(*m_url, path, m_timeout);
    if (!response) {
      return response.error();
    }
    if (response->status != 200) {
      return Error{fmt::format("GET {}{} answered {}", m_url->to_string(), path, response->status)};
    }
    return response->body;
  }

  Expected<http::Url> m_url;
  std::chrono::milliseconds m_timeout;
  std::chrono::milliseconds m_smoke_timeout;
};

}  // namespace

std::unique_ptr<ServerProbe> make_http_probe(const std::string& base_url,
                                             std::chrono::milliseconds timeout,
                                             std::chrono::milliseconds smoke_timeout) {
  return std::make_unique<HttpServerProbe>(http::parse_url(base_url), timeout, smoke_timeout);
}

}  // namespace gb10tune::verify

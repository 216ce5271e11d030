#include "support/fake_server.hpp"

#include <nlohmann/json.hpp>
#include <thread>

namespace gb10tune::testing {

bench::ServerTimings make_timings(double prompt_n, double prefill_tps, double predicted_n,
                                  double decode_tps) {
  bench::ServerTimings t;
  t.prompt_n = prompt_n;
  t.prompt_per_second = prefill_tps;
  t.prompt_ms = prompt_n / prefill_tps * 1000.0;
  t.predicted_n = predicted_n;
  t.predicted_per_second = decode_tps;
  t.predicted_ms = predicted_n / decode_tps * 1000.0;
  t.cache_n = 0;
  return t;
}

bench::ServerConnector FakeServer::connector() {
  return [this](const std::string& url,
                std::chrono::milliseconds) -> Expected<bench::ServerEndpoint> {
    {
      std::lock_guard lock(m_mutex);
      urls.push_back(url);
    }
    bench::ServerEndpoint endpoint;
    endpoint.info = [this, url]() -> Expected<bench::ServerInfo> {
      if (!refuse.empty()) {
        return Error{"no llama-server answers at " + url + " (" + refuse + ")", ExitCode::failed};
      }
      return info;
    };
    endpoint.complete = [this](const std::string& body) { return complete(body); };
    if (count_prompt) {
      endpoint.count_prompt = [this](const nlohmann::json& body) { return count_prompt(body); };
    }
    return endpoint;
  };
}

Expected<bench::CompletionReply> FakeServer::complete(const std::string& request_json) {
  int n = 0;
  {
    std::lock_guard lock(m_mutex);
    n = static_cast<int>(requests.size());
    requests.push_back(request_json);
    ++m_in_flight;
    max_in_flight = std::max(max_in_flight, m_in_flight);
  }
  if (delay.count() > 0) {
    std::this_thread::sleep_for(delay);
  }
  {
    std::lock_guard lock(m_mutex);
    --m_in_flight;
  }
  if (!refuse.empty() || n == fail_at) {
    return Error{"connection refused", ExitCode::failed};
  }
  const auto doc = nlohmann::json::parse(request_json);
  std::string last_user;
  for (const auto& message : doc["messages"]) {
    if (message["role"] == "user") {
      last_user = message["content"].get<std::string>();
    }
  }
  bench::CompletionReply reply;
  reply.timings = timings ? timings(n, last_user) : make_timings(500, 300, 100, 20);
  reply.client_seconds = reply.timings.prompt_ms / 1000 + reply.timings.predicted_ms / 1000;
  return reply;
}

}  // namespace gb10tune::testing

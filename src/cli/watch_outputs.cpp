#include "watch_outputs.hpp"

#include <fmt/format.h>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/platform/environment.hpp"

namespace gb10tune::cli {

namespace {

constexpr auto kNotifyTimeout = std::chrono::seconds(3);  // one POST, connect to answer

Status start_metrics(WatchOutputs& outputs, const std::string& address,
                     watch::Thresholds thresholds, std::uint64_t plan_bytes) {
  const auto where = watch::parse_metrics_address(address);
  if (!where) {
    return where.error();
  }
  outputs.board = std::make_shared<watch::MetricsBoard>(thresholds, plan_bytes);
  auto listener = platform::HttpListener::start(
      std::string(bare_host(where->host)), where->port,
      [board = outputs.board](const platform::HttpRequest& request) {
        if (request.method != "GET") {
          return platform::HttpAnswer{405, "text/plain; charset=utf-8", "GET only\n"};
        }
        if (request.path != "/metrics") {
          return platform::HttpAnswer{404, "text/plain; charset=utf-8", "only /metrics here\n"};
        }
        return platform::HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8",
                                    board->exposition()};
      });
  if (!listener) {
    return Error{"--metrics: " + listener.error().message, ExitCode::usage};
  }
  outputs.listener = std::move(*listener);
  return {};
}

Status start_notify(WatchOutputs& outputs, const WatchOutputOptions& options) {
  const auto format = watch::parse_notify_format(options.notify_format);
  if (!format) {
    return format.error();
  }
  const auto url = http::parse_url(options.notify);
  if (!url) {
    return Error{fmt::format("--notify '{}': {}; give http[s]://HOST[:PORT][/PATH]", options.notify,
                             url.error().message),
                 ExitCode::usage};
  }
  outputs.format = *format;
  outputs.notify = std::make_shared<watch::NotifySender>(
      [url = *url, proxies = platform::Environment::current()](const std::string& body) -> Status {
        // A webhook is a service on the internet (Slack, Discord, a bot): it goes through the
        // proxies of the environment, as curl would, unlike the calls to llama-server.
        http::HttpRequest request;
        request.url = url.to_string() + (url.base_path.empty() ? "/" : "");
        request.body = body;
        request.timeout = kNotifyTimeout;
        request.max_bytes = 64 * 1024;
        request.proxies = proxies;
        const auto reply = http::http_request(request);
        if (!reply) {
          return reply.error();
        }
        if (reply->response.status / 100 != 2) {
          return Error{fmt::format("{} answered {}", url.to_string(), reply->response.status)};
        }
        return {};
      },
      watch::NotifySender::Limits{});
  return {};
}

}  // namespace

Expected<WatchOutputs> start_watch_outputs(const WatchOutputOptions& options,
                                           watch::Thresholds thresholds, std::uint64_t plan_bytes) {
  WatchOutputs outputs;
  if (!options.notify.empty()) {
    if (const Status started = start_notify(outputs, options); !started) {
      return started.error();
    }
  }
  if (!options.metrics.empty()) {
    if (const Status started = start_metrics(outputs, options.metrics, thresholds, plan_bytes);
        !started) {
      return started.error();
    }
  }
  return outputs;
}

std::function<void(const watch::Event&)> watch_emitter(
    const WatchOutputs& outputs, std::function<void(const watch::Event&)> print,
    std::function<std::string()> now_iso8601) {
  return [board = outputs.board, notify = outputs.notify, format = outputs.format,
          print = std::move(print), now = std::move(now_iso8601)](const watch::Event& event) {
    if (board) {
      board->event(event);
    }
    if (notify) {
      if (auto body = watch::notify_body(event, format, now ? now() : "")) {
        notify->send(std::move(*body));
      }
    }
    print(event);
  };
}

std::function<void(const watch::Sample&)> watch_sample_sink(const WatchOutputs& outputs) {
  if (!outputs.board) {
    return {};
  }
  return [board = outputs.board](const watch::Sample& sample) { board->sample(sample); };
}

}  // namespace gb10tune::cli

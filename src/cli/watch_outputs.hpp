// Where `gb10tune watch` sends its samples and events besides stdout: the Prometheus endpoint
// of --metrics and the webhook of --notify.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gb10tune/platform/http_listener.hpp"
#include "gb10tune/watch/watch_metrics.hpp"
#include "gb10tune/watch/watch_notify.hpp"

namespace gb10tune::cli {

// The options, as given ("" when not).
struct WatchOutputOptions {
  std::string metrics;                    // --metrics [ADDR:]PORT
  std::string notify;                     // --notify URL
  std::string notify_format = "generic";  // --notify-format
};

// What runs while the watch does; every part empty when its option was not given.
struct WatchOutputs {
  std::shared_ptr<watch::MetricsBoard> board;
  std::unique_ptr<platform::HttpListener> listener;
  std::shared_ptr<watch::NotifySender> notify;
  watch::NotifyFormat format = watch::NotifyFormat::generic;
};

// Starts serving /metrics and the webhook's sender. A usage Error naming --metrics or --notify
// when the address cannot be bound or the URL is not http://HOST[:PORT][/PATH].
Expected<WatchOutputs> start_watch_outputs(const WatchOutputOptions& options,
                                           watch::Thresholds thresholds, std::uint64_t plan_bytes);

// Each event into the metrics' counts and, when it is an edge, to the webhook (queued, never
// waited for), then to `print`. `now_iso8601` may be empty.
std::function<void(const watch::Event&)> watch_emitter(
    const WatchOutputs& outputs, std::function<void(const watch::Event&)> print,
    std::function<std::string()> now_iso8601);

// Each sample into the metrics; empty without --metrics.
std::function<void(const watch::Sample&)> watch_sample_sink(const WatchOutputs& outputs);

}  // namespace gb10tune::cli

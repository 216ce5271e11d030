// Fetching a Prometheus endpoint and parsing it with the Prometheus client's own text parser
// (python3-prometheus-client), for the tests of watch --metrics.
#pragma once

#include <map>
#include <string>

namespace gb10tune::testing {

// Fetches `url` until its text holds `wait_for` (30 s at most: on a loaded machine watch may
// be slow to start) and parses it with prometheus_client: one entry per sample, keyed `name` or
// `name{label="value",…}` (labels in name order), valued as parsed. Empty, with `error` set,
// when the parser or the fetch failed.
std::map<std::string, double> scrape_prometheus(const std::string& url, const std::string& wait_for,
                                                std::string& error);

}  // namespace gb10tune::testing

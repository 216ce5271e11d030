#include "support/prometheus_scrape.hpp"

#include <chrono>
#include <sstream>

#include "gb10tune/platform/process.hpp"

namespace gb10tune::testing {

std::map<std::string, double> scrape_prometheus(const std::string& url, const std::string& wait_for,
                                                std::string& error) {
  const std::string script = R"(
import sys, time, urllib.request
from prometheus_client.parser import text_string_to_metric_families
text = ""
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        text = urllib.request.urlopen(sys.argv[1], timeout=2).read().decode()
        if sys.argv[2] in text:
            break
    except OSError:
        pass
    time.sleep(0.1)
for family in text_string_to_metric_families(text):
    for sample in family.samples:
        labels = ",".join('%s="%s"' % item for item in sorted(sample.labels.items()))
        print(sample.name + ("{" + labels + "}" if labels else "") + "\t" + repr(sample.value))
)";
  // The distribution's interpreter: python3-prometheus-client installs for it.
  const auto run = platform::run_capture({"/usr/bin/python3", "-c", script, url, wait_for},
                                         std::chrono::seconds(60));
  std::map<std::string, double> values;
  if (!run || run->exit_status != 0) {
    error = run ? run->output : run.error().message;
    return values;
  }
  std::istringstream lines(run->output);
  std::string line;
  while (std::getline(lines, line)) {
    const auto tab = line.rfind('\t');
    if (tab != std::string::npos) {
      values[line.substr(0, tab)] = std::stod(line.substr(tab + 1));
    }
  }
  return values;
}

}  // namespace gb10tune::testing

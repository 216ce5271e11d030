// Stand-in llama-server, part 4: a speed that depends on the command line, for the tuner's
// tests. STANDIN_SPEED="OPTION=VALUE:FACTOR,…" multiplies the decode and prefill rates by
// FACTOR for each OPTION given with VALUE (as "OPTION VALUE" or "OPTION=VALUE"); each request's
// rates also depend on its context (longer contexts decode slower, as on a real server) and
// vary by well under 1% from one request to the next.
#include <cstdlib>

#include "stand_in.hpp"

namespace standin {

namespace {

// Whether `argv` gives `option` the value `value`.
bool gives(const std::vector<std::string>& argv, const std::string& option,
           const std::string& value) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == option + "=" + value ||
        (argv[i] == option && i + 1 < argv.size() && argv[i + 1] == value)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<double> speed_factor(const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& argv) {
  const auto it = env.find("STANDIN_SPEED");
  if (it == env.end()) {
    return std::nullopt;
  }
  double factor = 1.0;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const std::string_view item = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), item.size() + 1));
    const auto eq = item.find('=');
    const auto colon = item.rfind(':');
    if (eq == std::string_view::npos || colon == std::string_view::npos || colon < eq) {
      continue;
    }
    const std::string option(item.substr(0, eq));
    const std::string value(item.substr(eq + 1, colon - eq - 1));
    if (gives(argv, option, value)) {
      factor *= std::atof(std::string(item.substr(colon + 1)).c_str());
    }
  }
  return factor;
}

nlohmann::json speed_timings(double factor, const nlohmann::json& body, std::uint64_t index) {
  std::size_t chars = 0;
  for (const auto& message : body.value("messages", nlohmann::json::array())) {
    if (message.contains("content") && message["content"].is_string()) {
      chars += message["content"].get<std::string>().size();
    }
  }
  // ±0.6% from request to request, the same sequence on every start.
  const double noise = 1.0 + 0.003 * static_cast<double>(static_cast<int>(index * 7 % 5) - 2);
  const double decode = 40.0 / (1.0 + static_cast<double>(chars) / 2000.0) * factor * noise;
  const double prefill = 400.0 * factor * noise;
  const double prompt_n = 50.0 + static_cast<double>(chars) / 4.0;
  const double predicted_n = body.value("max_tokens", 128);
  return {{"cache_n", 0},
          {"prompt_n", prompt_n},
          {"prompt_ms", prompt_n / prefill * 1000.0},
          {"prompt_per_second", prefill},
          {"predicted_n", predicted_n},
          {"predicted_ms", predicted_n / decode * 1000.0},
          {"predicted_per_second", decode}};
}

}  // namespace standin

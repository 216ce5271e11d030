#include "support/server_results.hpp"

#include <string>

#include "support/fake_server.hpp"

namespace gb10tune::testing {

bench::ServerBenchResult make_result(const std::vector<double>& decode,
                                     const std::vector<double>& prefill,
                                     const std::vector<double>& accepted, int draft_n_max) {
  bench::ServerBenchResult r;
  bench::Provenance& p = r.provenance;
  p.date = "2026-11-29T12:00:00Z";
  p.tool_version = "0.1.0";
  p.url = "http://127.0.0.1:8080";
  p.model_path = "/models/qwen.gguf";
  p.build_info = "b7000-3f545be";
  p.total_slots = 1;
  p.n_ctx_per_slot = 65536;
  p.speculative = !accepted.empty();
  p.props = {{"total_slots", 1}};
  p.launch_argv = {"llama-server", "--spec-draft-n-max", std::to_string(draft_n_max)};
  p.settings = {{"model", p.model_path},
                {"build", p.build_info},
                {"argv:--spec-draft-n-max", std::to_string(draft_n_max)}};
  r.workload_source = "built-in default workload";
  r.workload_requests = 20;
  r.workload_conversations = 5;
  r.options.samples = static_cast<int>(decode.size());
  bench::LevelResult level;
  for (std::size_t i = 0; i < decode.size(); ++i) {
    bench::RequestSample sample;
    sample.request = "c/" + std::to_string(i + 1);
    sample.round = static_cast<int>(i);
    sample.timings = make_timings(1000, prefill[i % prefill.size()], 256, decode[i]);
    if (!accepted.empty()) {
      sample.timings.draft_n = 300;
      sample.timings.draft_n_accepted = accepted[i % accepted.size()];
    }
    sample.client_seconds = 1;
    level.round_totals.push_back(decode[i]);
    level.generated_tokens += 256;
    level.samples.push_back(sample);
  }
  level.wall_seconds = static_cast<double>(decode.size()) * 12.0;
  r.levels.push_back(level);
  return r;
}

void add_level(bench::ServerBenchResult& result, int concurrency,
               const std::vector<double>& per_session) {
  bench::LevelResult level;
  level.concurrency = concurrency;
  double total = 0;
  for (std::size_t i = 0; i < per_session.size(); ++i) {
    bench::RequestSample sample;
    sample.request = "c/" + std::to_string(i + 1);
    sample.session = static_cast<int>(i) % concurrency;
    sample.round = static_cast<int>(i) / concurrency;
    sample.timings = make_timings(1000, 300, 256, per_session[i]);
    level.samples.push_back(sample);
    level.generated_tokens += 256;
    total += per_session[i];
    if (sample.session == concurrency - 1) {
      level.round_totals.push_back(total);
      total = 0;
    }
  }
  level.wall_seconds = 30;
  result.levels.push_back(level);
  result.options.concurrency.push_back(concurrency);
}

bench::ServerBenchResult with_other_requests(bench::ServerBenchResult result,
                                             const std::string& prefix) {
  for (bench::LevelResult& level : result.levels) {
    for (std::size_t i = 0; i < level.samples.size(); ++i) {
      level.samples[i].request = prefix + "/" + std::to_string(i + 1);
    }
  }
  return result;
}

}  // namespace gb10tune::testing

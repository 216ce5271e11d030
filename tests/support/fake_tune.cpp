#include "support/fake_tune.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gb10tune::testing {

namespace {

// A request's own size: 1 to 5, so that unpaired medians of two runs overlap widely.
double request_size(int request) {
  static const double kSizes[] = {1.0, 4.5, 2.0, 5.0, 1.5, 3.0, 2.5, 4.0};
  return kSizes[static_cast<std::size_t>(request) % std::size(kSizes)];
}

}  // namespace

tune::TuneSeam FakeTuneWorld::seam() {
  if (running.is_null()) {
    running = original;
  }
  tune::TuneSeam seam;
  seam.plan = [this](const nlohmann::json& settings) -> Expected<tune::PlanCheck> {
    return plan_check ? plan_check(settings) : tune::PlanCheck{};
  };
  seam.restart = [this](const nlohmann::json& settings, const std::atomic<bool>& stop,
                        const tune::Tick& tick) -> Status {
    const int number = static_cast<int>(started.size());
    started.push_back(settings);
    original_running = false;
    running = nullptr;  // stopped
    now += restart_s / 2;
    if (during_restart) {
      during_restart(number);
    }
    tick();
    if (stop.load()) {
      return Error{"interrupted while the server loaded", ExitCode::interrupted};
    }
    now += restart_s / 2;
    if (start_fails && start_fails(settings)) {
      return Error{"llama-server exited during load: out of memory", ExitCode::server_failed};
    }
    running = settings;
    return {};
  };
  seam.restore = [this]() -> Status {
    ++restores;
    now += restart_s;
    running = original;
    original_running = true;
    return {};
  };
  seam.measure = [this](const tune::MeasureAsk& ask, const std::atomic<bool>& stop,
                        const tune::Tick& tick) -> Expected<tune::WorkloadRun> {
    asks.push_back(ask);
    if (running.is_null()) {
      return Error{"no server answers", ExitCode::failed};
    }
    tune::WorkloadRun run;
    run.level.concurrency = ask.concurrency;
    double factor = speed ? speed(running, ask.fields) : 1.0;
    std::normal_distribution<double> normal(0.0, 1.0);
    if (run_sd > 0) {
      factor *= std::exp(run_sd * normal(rng));
    }
    for (int round = 0; round < ask.warmup + ask.samples; ++round) {
      tick();
      if (stop.load()) {
        return Error{"interrupted", ExitCode::interrupted};
      }
      now += request_s;
      if (round < ask.warmup) {
        run.warmup_s += request_s;
        continue;
      }
      run.samples_s += request_s;
      double noisy = factor * (drift ? drift(now) : 1.0);
      if (noise_sd > 0) {
        noisy *= std::exp(noise_sd * normal(rng));
      }
      bench::RequestSample sample;
      sample.request = fmt::format("r{}", round);
      sample.round = round - ask.warmup;
      sample.timings.predicted_per_second = 10.0 * request_size(round) * noisy;
      sample.timings.predicted_n = 100;
      sample.timings.prompt_ms = 100.0 * request_size(round) / noisy;
      sample.timings.prompt_n = 100;
      run.level.samples.push_back(sample);
      run.level.round_totals.push_back(sample.timings.predicted_per_second);
    }
    return run;
  };
  seam.mem_available = [this]() -> std::optional<std::uint64_t> {
    return available ? available() : 100'000'000'000ull;
  };
  seam.clock = [this] { return now; };
  seam.journal = [this](const nlohmann::json& line) -> Status {
    journal.push_back(line);
    return {};
  };
  return seam;
}

std::string journal_text(const std::vector<nlohmann::json>& lines) {
  std::string text;
  for (const nlohmann::json& line : lines) {
    text += line.dump() + "\n";
  }
  return text;
}

}  // namespace gb10tune::testing

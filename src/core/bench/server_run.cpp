#include "gb10tune/bench/server_run.hpp"

#include <fmt/format.h>

#include <optional>
#include <thread>

namespace gb10tune::bench {

namespace {

Status check_options(const ServerRunOptions& options) {
  if (options.concurrency.empty()) {
    return Error{"--concurrency needs at least one level, such as 1,2,3", ExitCode::usage};
  }
  for (int level : options.concurrency) {
    if (level < 1 || level > 256) {
      return Error{fmt::format("--concurrency {} is out of range; give levels from 1 to 256 "
                               "(at most the server's slots, -np, to measure anything useful)",
                               level),
                   ExitCode::usage};
    }
  }
  if (options.samples < 0 || options.warmup < 0) {
    return Error{"--samples and --warmup cannot be negative", ExitCode::usage};
  }
  return {};
}

// Runs one round: `concurrency` sessions in parallel, session s sending request `indices[s]`.
Expected<std::vector<RequestSample>> run_round(const ServerRunInputs& inputs, int concurrency,
                                               int step, int round) {
  const Workload& workload = *inputs.workload;
  std::vector<std::optional<Expected<CompletionReply>>> replies(concurrency);
  std::vector<std::size_t> indices(concurrency);
  std::vector<std::string> bodies(concurrency);
  for (int s = 0; s < concurrency; ++s) {
    indices[s] = request_index(workload.requests.size(), concurrency, s, step);
    bodies[s] = request_json(workload.requests[indices[s]]);
  }
  if (concurrency == 1) {
    replies[0].emplace(inputs.complete(bodies[0]));
  } else {
    std::vector<std::thread> threads;
    threads.reserve(concurrency);
    for (int s = 0; s < concurrency; ++s) {
      threads.emplace_back([&, s] { replies[s].emplace(inputs.complete(bodies[s])); });
    }
    for (std::thread& thread : threads) {
      thread.join();
    }
  }
  std::vector<RequestSample> samples;
  for (int s = 0; s < concurrency; ++s) {
    const Expected<CompletionReply>& reply = *replies[s];
    const std::string& name = workload.requests[indices[s]].name;
    if (!reply) {
      return Error{fmt::format("request {} (session {} of {}) failed: {}", name, s + 1, concurrency,
                               reply.error().message),
                   ExitCode::failed};
    }
    RequestSample sample;
    sample.request = name;
    sample.session = s;
    sample.round = round;
    sample.timings = reply->timings;
    sample.client_seconds = reply->client_seconds;
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace

std::size_t request_index(std::size_t workload_size, int concurrency, int session, int step) {
  const std::size_t offset =
      static_cast<std::size_t>(session) * workload_size / static_cast<std::size_t>(concurrency);
  return (offset + static_cast<std::size_t>(step)) % workload_size;
}

Expected<std::vector<LevelResult>> run_server_bench(const ServerRunInputs& inputs) {
  if (const Status ok = check_options(inputs.options); !ok) {
    return ok.error();
  }
  const Workload& workload = *inputs.workload;
  const int measured = inputs.options.samples > 0 ? inputs.options.samples
                                                  : static_cast<int>(workload.requests.size());
  const int warmup = inputs.options.warmup;
  std::vector<LevelResult> levels;
  for (int concurrency : inputs.options.concurrency) {
    LevelResult level;
    level.concurrency = concurrency;
    double started = 0;
    for (int step = 0; step < warmup + measured; ++step) {
      if (inputs.cancel != nullptr && inputs.cancel->load()) {
        return Error{"interrupted: no result was saved", ExitCode::interrupted};
      }
      const bool is_warmup = step < warmup;
      if (step == warmup) {
        started = inputs.clock();
      }
      auto samples = run_round(inputs, concurrency, step, is_warmup ? -1 : step - warmup);
      if (!samples) {
        return samples.error();
      }
      if (inputs.progress) {
        inputs.progress(concurrency, step + 1, warmup + measured, is_warmup, *samples);
      }
      if (is_warmup) {
        continue;
      }
      double total = 0;
      for (RequestSample& sample : *samples) {
        total += sample.timings.predicted_per_second;
        level.generated_tokens += static_cast<std::uint64_t>(sample.timings.predicted_n);
        level.samples.push_back(std::move(sample));
      }
      level.round_totals.push_back(total);
    }
    level.wall_seconds = inputs.clock() - started;
    levels.push_back(std::move(level));
  }
  return levels;
}

}  // namespace gb10tune::bench

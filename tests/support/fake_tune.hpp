// A fake world for the tune runner: a server whose speed is a function of its settings, a clock
// that jumps by what each restart and request costs, a plan that refuses what the test says,
// and a record of everything asked of it (starts, restores, the request fields, the journal).
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gb10tune/tune/tune_runner.hpp"

namespace gb10tune::testing {

class FakeTuneWorld {
 public:
  // The settings the original server runs (the tune's start settings).
  nlohmann::json original = nlohmann::json::object();
  // Relative speed of the running server's settings with the request fields sent; default 1.
  // A request's figure is its own size (requests differ by up to 5×) times this.
  std::function<double(const nlohmann::json& settings, const nlohmann::json& fields)> speed;
  // The plan's verdict; default: everything fits.
  std::function<tune::PlanCheck(const nlohmann::json& settings)> plan_check;
  // Whether a start of `settings` fails (ExitCode::server_failed); default: never.
  std::function<bool(const nlohmann::json& settings)> start_fails;
  // Called in the middle of each restart (after the stop, before ready) with its 0-based
  // number; the test may set the cancel flag there.
  std::function<void(int restart)> during_restart;
  // MemAvailable, asked at every tick; default 100 GB.
  std::function<std::uint64_t()> available;

  double restart_s = 10;  // what a restart costs on the fake clock
  double request_s = 1;   // what one request costs

  // Noise, seeded: each request's figure is multiplied by exp(N(0, noise_sd)), each run's by
  // exp(N(0, run_sd)) (a level that moves every request of a run together), and everything by
  // drift(now) (a server slowing down over the tune: 1 - 0.1 * now / 1000, …); none by default.
  double noise_sd = 0;
  double run_sd = 0;
  std::function<double(double now)> drift;
  std::mt19937_64 rng{1};

  // The seam over this world.
  tune::TuneSeam seam();

  // What happened.
  std::vector<nlohmann::json> started;  // settings of every restart, in order
  int restores = 0;
  bool original_running = true;  // the original process (or its restore) runs now
  nlohmann::json running;        // the settings of the server running now (null: none)
  std::vector<tune::MeasureAsk> asks;
  std::vector<nlohmann::json> journal;
  double now = 0;
};

// The journal lines as JSON-lines text (what the state directory's file would hold).
std::string journal_text(const std::vector<nlohmann::json>& lines);

}  // namespace gb10tune::testing

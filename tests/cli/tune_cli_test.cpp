// gb10tune tune against the stand-in llama-server, whose speed follows its command line
// (STANDIN_SPEED): a tune that finishes and saves a profile launch starts, a budget that stops
// it, a candidate the plan refuses and that never starts (the server log's start headers prove
// it), Ctrl-C in the middle of a restart that leaves the original argv running, and --resume.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"
#include "support/background_run.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// Depth 5 and 6 draft faster than 4, 7 slower; a micro-batch of 256 helps a little.
constexpr const char* kTuneSpeed =
    "--spec-draft-n-max=5:1.10,--spec-draft-n-max=6:1.16,--spec-draft-n-max=7:1.05,"
    "--spec-draft-n-max=3:0.9,-ub=256:1.02";

// A tune's world: a model, state and config folders, a captured CPU machine without a GPU for
// the plans (its MemAvailable is fixed), and the stand-in launched on a free port.
class TuneWorld {
 public:
  explicit TuneWorld(std::map<std::string, std::string> extra_env = {}) {
    fs::copy(sysroot_fixture("no-gpu"), m_root.path(), fs::copy_options::recursive);
    m_model = (m_dir.path() / "tiny-qwen35.gguf").string();
    tiny_qwen35_model().write(m_model);
    m_env = {{"XDG_STATE_HOME", (m_dir.path() / "state").string()},
             {"XDG_CONFIG_HOME", (m_dir.path() / "config").string()},
             {"STANDIN_LOAD_MS", "100"},
             {"STANDIN_SPEED", kTuneSpeed}};
    for (auto& [name, value] : extra_env) {
      m_env[name] = value;
    }
  }
  ~TuneWorld() { stop(); }

  // gb10tune ARGS with the world's environment and captured machine.
  CliResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"--sysroot", m_root.path().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_binary(argv, env_changes());
  }
  // gb10tune stop, on this machine's processes (a captured machine has none to stop).
  CliResult stop() const { return run_binary({"stop"}, env_changes()); }
  // The launch the tune starts from, always on the same port: the model's default profile with
  // one slot of 4096 tokens, no prompt cache, no reserve.
  CliResult launch(const std::vector<std::string>& more = {},
                   const std::string& ctx_per_slot = "4096") const {
    std::vector<std::string> args = stand_in_launch_args(m_model, m_port, false);
    std::replace(args.begin(), args.end(), std::string("4096"), ctx_per_slot);
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  }
  std::vector<std::string> env_changes() const {
    std::vector<std::string> changes;
    for (const auto& [name, value] : m_env) {
      changes.push_back(name + "=" + value);
    }
    return changes;
  }
  const std::map<std::string, std::string>& env() const { return m_env; }
  std::string root() const { return m_root.path().string(); }
  fs::path state() const { return m_dir.path() / "state" / "gb10tune"; }
  fs::path profiles() const { return m_dir.path() / "config" / "gb10tune" / "profiles"; }
  const std::string& model() const { return m_model; }
  json record() const { return json::parse(read_text(state() / "launch.json")); }
  // The argv of every server start in the server log, in order.
  std::vector<std::string> starts() const {
    std::vector<std::string> found;
    const std::string log = read_text(state() / "llama-server.log");
    for (const std::string_view line : split(log, '\n')) {
      if (starts_with(line, "==== gb10tune") && line.find(" launch at ") != std::string::npos) {
        found.emplace_back(line.substr(line.find(": ", line.find(" launch at ")) + 2));
      }
    }
    return found;
  }

 private:
  TempDir m_dir;
  TempDir m_root;
  std::string m_model;
  int m_port = free_tcp_port();
  std::map<std::string, std::string> m_env;
};

// The JSON document in a --json run's output (stdout and stderr together): from the line "{"
// to the line "}".
json tune_document(const CliResult& result) {
  const auto begin = result.out.find("{\n");
  const auto end = result.out.find("\n}\n", begin);
  if (begin == std::string::npos || end == std::string::npos ||
      (begin > 0 && result.out[begin - 1] != '\n')) {
    ADD_FAILURE() << "no JSON document in:\n" << result.out;
    return json::object();
  }
  return json::parse(result.out.substr(begin, end + 2 - begin));
}

// Whether process `pid` runs with exactly `argv` (its /proc/<pid>/cmdline).
bool runs_with(int pid, const std::vector<std::string>& argv) {
  std::string expected;
  for (const std::string& arg : argv) {
    expected += arg + '\0';
  }
  return process_alive(pid) && read_text("/proc/" + std::to_string(pid) + "/cmdline") == expected;
}

TEST(CliTune, WithoutALaunchedServerSaysToLaunchFirst) {
  const TuneWorld world;
  const auto result = world.run({"tune", "--budget", "1m"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.out, "start it first: gb10tune launch")) << result.out;
}

TEST(CliTune, FinishesSavesAProfileLaunchStartsAndLeavesTheOriginalRunning) {
  const TuneWorld world;
  ASSERT_EQ(world.launch().exit_code, 0);
  const json original = world.record();
  const auto tuned = world.run({"tune", "--budget", "2m", "--json"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  EXPECT_EQ(doc.value("/winner/settings/draft_n_max"_json_pointer, 0), 6) << doc.dump(1);
  const std::string name = doc.at("profile").at("name");
  EXPECT_TRUE(fs::exists(world.profiles() / (name + ".json")));
  // The original runs again with its own argv and record.
  const json now = world.record();
  EXPECT_EQ(now["argv"], original["argv"]);
  EXPECT_EQ(now["plan"], original["plan"]);
  EXPECT_TRUE(runs_with(now["pid"], now["argv"]));
  EXPECT_TRUE(contains(tuned.out, "gb10tune launch --profile " + name)) << tuned.out;

  // Without --profile, launch names the tuned profile and does not use it.
  ASSERT_EQ(world.stop().exit_code, 0);
  const auto plain = world.launch();
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_TRUE(contains(plain.out, "a tuned profile exists for this model and build: " + name))
      << plain.out;
  EXPECT_EQ(world.record()["argv"], original["argv"]);
  // With it, the winner starts.
  ASSERT_EQ(world.stop().exit_code, 0);
  const auto winner = world.run({"launch", "--profile", name});
  ASSERT_EQ(winner.exit_code, 0) << winner.out;
  const std::string argv = world.record()["argv"].dump();
  EXPECT_TRUE(contains(argv, R"("--spec-draft-n-max","6")")) << argv;
}

TEST(CliTune, TheBudgetStopsItWithinOneCandidate) {
  const TuneWorld world(std::map<std::string, std::string>{{"STANDIN_LOAD_MS", "1500"}});
  ASSERT_EQ(world.launch().exit_code, 0);
  const auto began = std::chrono::steady_clock::now();
  const auto tuned = world.run({"tune", "--budget", "6s", "--json"});
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  EXPECT_EQ(doc.value("stopped", ""), "budget") << doc.dump(1);
  // A candidate costs a restart (~1.6 s) and its requests; the restore after the budget is
  // one more start.
  double longest = 0;
  for (const json& c : doc.at("candidates")) {
    longest = std::max(longest, c.value("/cost/restart_s"_json_pointer, 0.0) +
                                    c.value("/cost/warmup_s"_json_pointer, 0.0) +
                                    c.value("/cost/samples_s"_json_pointer, 0.0));
  }
  EXPECT_LE(doc.value("elapsed_s", 1e9), 6.0 + longest) << doc.dump(1);
  EXPECT_LT(wall, 6.0 + 2 * longest + 10) << "the tune and its restore took " << wall << " s";
  EXPECT_TRUE(contains(tuned.out, "a restart costs")) << tuned.out;
}

TEST(CliTune, TheGridOverTheNamedKnobsMeasuresEveryCombination) {
  const TuneWorld world;
  ASSERT_EQ(world.launch().exit_code, 0);
  const auto tuned = world.run({"tune", "--strategy", "grid", "--knobs", "draft_n_max,flash_attn",
                                "--budget", "5m", "--json", "--no-save"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  EXPECT_EQ(doc.value("strategy", ""), "grid");
  EXPECT_EQ(doc.value("stopped", ""), "done") << doc.dump(1);
  std::size_t searched = 1;
  for (const json& knob : doc.at("knobs")) {
    const std::string setting = knob.value("setting", "");
    if (setting == "draft_n_max" || setting == "flash_attn") {
      searched *= knob.at("values").size();
    } else if (knob.value("skipped", "").empty()) {
      ADD_FAILURE() << setting << " was searched though not named";
    }
  }
  EXPECT_EQ(doc.at("candidates").size(), searched - 1) << doc.dump(1);
  EXPECT_EQ(doc.value("/winner/settings/draft_n_max"_json_pointer, 0), 6) << doc.dump(1);
}

TEST(CliTune, AKnobThatIsNoKnobIsAUsageError) {
  const TuneWorld world;
  ASSERT_EQ(world.launch().exit_code, 0);
  const auto refused = world.run({"tune", "--knobs", "ubatch,microbatch", "--budget", "1m"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(contains(refused.out, "--knobs microbatch: no such knob; the knobs are draft_n_max"))
      << refused.out;
  EXPECT_TRUE(world.starts().size() == 1) << "nothing was restarted";
}

// The plan's total and available bytes of the stand-in launch with `more` options (dry run).
std::pair<double, double> tune_plan_figures(const TuneWorld& world,
                                            const std::vector<std::string>& more) {
  std::vector<std::string> args = {"--dry-run", "--json"};
  args.insert(args.end(), more.begin(), more.end());
  const auto result = world.launch(args);
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const json doc = tune_document(result);
  return {doc.value("/plan/total_bytes"_json_pointer, 0.0),
          doc.value("/plan/available_bytes"_json_pointer, 0.0)};
}

TEST(CliTune, ACandidateThatDoesNotFitIsNeverStarted) {
  const TuneWorld world;
  // A reserve that leaves room for the start's plan but not for a micro-batch of 1024.
  const auto [start_total, available] = tune_plan_figures(world, {"--ubatch", "512"});
  const auto [larger_total, unused] = tune_plan_figures(world, {"--ubatch", "1024"});
  ASSERT_GT(larger_total, start_total);
  const auto reserve = static_cast<std::uint64_t>(available - (start_total + larger_total) / 2);
  ASSERT_EQ(world.launch().exit_code, 0);
  const auto tuned =
      world.run({"tune", "--budget", "2m", "--json", "--reserve", std::to_string(reserve)});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  std::vector<int> refused;
  for (const json& c : doc.at("candidates")) {
    if (c.value("outcome", "") == "does not fit") {
      EXPECT_TRUE(contains(c.value("why", ""), "does not fit")) << c.dump();
      if (c.value("setting", "") == "ubatch") {
        refused.push_back(c.at("value").get<int>());
      }
    }
  }
  ASSERT_FALSE(refused.empty()) << doc.dump(1);
  for (const std::string& argv : world.starts()) {
    for (const int ubatch : refused) {
      EXPECT_FALSE(contains(argv, "-ub " + std::to_string(ubatch) + " ")) << argv;
    }
  }
}

// The shipped workload on a byte-level vocabulary (the stand-in's /tokenize counts a token per
// byte and refuses a prompt as long as the slot with llama-server's HTTP 400): at 8192 tokens per
// slot its longest request (cpp-tokenizer/4, ~8800 tokens) does not fit, although the estimate
// of 4 characters per token says ~2600. tune leaves it out with one line, measures decode with
// every request about as deep as the deepest one left, records that depth in its journal, and a
// resume with another depth is refused.
TEST(CliTune, AWorkloadLongerThanTheSlotIsTrimmedByTheServersCountAndMeasuredDeep) {
  const TuneWorld world(std::map<std::string, std::string>{{"STANDIN_TOKEN_BYTES", "1"}});
  ASSERT_EQ(world.launch({}, "8192").exit_code, 0);
  const auto tuned =
      world.run({"tune", "--knobs", "ubatch", "--budget", "2m", "--json", "--no-save"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_TRUE(contains(tuned.out,
                       "gb10tune tune: 1 of 19 requests left out: longer than the server's slot "
                       "of 8192 tokens (their prompt, counted by the server's tokenizer, and "
                       "max_tokens; they would fail with HTTP 400)"))
      << tuned.out;
  EXPECT_FALSE(contains(tuned.out, "exceeds the available context size")) << tuned.out;
  const json doc = tune_document(tuned);
  EXPECT_EQ(doc.value("stopped", ""), "done") << doc.dump(1);
  // The deepest request left (python-csv-report/4: 7630 bytes of ChatML, and BOS).
  EXPECT_EQ(doc.value("depth", 0), 7631) << doc.dump(1);
  EXPECT_TRUE(contains(tuned.out,
                       "decode is measured 7631 tokens deep (the workload's deepest "
                       "prompt)"))
      << tuned.out;
  const std::string journal = read_text(world.state() / "tune-journal.jsonl");
  const json header = json::parse(journal.substr(0, journal.find('\n')));
  EXPECT_EQ(header.value("depth", 0), 7631) << header.dump();

  const auto other_depth = world.run(
      {"tune", "--resume", "--depth", "4000", "--knobs", "ubatch", "--budget", "1m", "--no-save"});
  EXPECT_EQ(other_depth.exit_code, 2) << other_depth.out;
  EXPECT_TRUE(contains(other_depth.out, "depth: the journal's is 7631, this tune's is 4000"))
      << other_depth.out;
  // A depth the slot has no room for, with the workload's largest max_tokens (400), is refused
  // before anything is measured.
  const auto too_deep = world.run({"tune", "--depth", "8000", "--budget", "1m"});
  EXPECT_EQ(too_deep.exit_code, 2) << too_deep.out;
  EXPECT_TRUE(contains(too_deep.out,
                       "--depth 8000 does not fit the server's slot of 8192 tokens "
                       "(/props n_ctx per slot) with the workload's largest "
                       "max_tokens (400): give --depth 7792 at most"))
      << too_deep.out;
}

TEST(CliTune, CtrlCInTheMiddleOfARestartRestoresTheOriginalAndResumeGoesOn) {
  const TuneWorld world(std::map<std::string, std::string>{{"STANDIN_LOAD_MS", "1500"}});
  ASSERT_EQ(world.launch().exit_code, 0);
  const json original = world.record();
  std::map<std::string, std::string> env = world.env();
  BackgroundRun run({"--sysroot", world.root(), "tune", "--budget", "5m"}, env);
  ASSERT_TRUE(run.child);
  // The second candidate (draft depth 6) is loading: its start header is in the log.
  const auto loading = [&world] {
    const auto starts = world.starts();
    return !starts.empty() && contains(starts.back(), "--spec-draft-n-max 6 ");
  };
  for (int i = 0; i < 3000 && !loading(); ++i) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(loading()) << read_text(run.output);
  std::this_thread::sleep_for(200ms);
  run.child->signal(SIGINT);
  const auto exit = run.wait(60s);
  ASSERT_TRUE(exit) << "tune did not end on SIGINT";
  EXPECT_EQ(exit->exit_status, 130) << read_text(run.output);
  const json restored = world.record();
  EXPECT_EQ(restored["argv"], original["argv"]);
  EXPECT_TRUE(runs_with(restored["pid"], restored["argv"])) << read_text(run.output);
  EXPECT_EQ(world.starts().back(), shell_join(original["argv"].get<std::vector<std::string>>()));
  EXPECT_TRUE(contains(read_text(run.output), "--resume")) << read_text(run.output);

  // --resume: the candidate measured before the interrupt (depth 5) is not started again.
  const std::vector<std::string> measured_before = world.starts();
  ASSERT_GE(measured_before.size(), 3u);
  const std::string first_candidate = measured_before[1];
  ASSERT_TRUE(contains(first_candidate, "--spec-draft-n-max 5 ")) << first_candidate;
  const auto resumed = world.run({"tune", "--resume", "--budget", "12s", "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::vector<std::string> all = world.starts();
  for (std::size_t i = measured_before.size(); i < all.size(); ++i) {
    EXPECT_NE(all[i], first_candidate) << "started again: " << all[i] << "\n"
                                       << read_text(run.output) << resumed.out;
  }
  EXPECT_EQ(world.record()["argv"], original["argv"]);
}

}  // namespace
}  // namespace gb10tune::testing

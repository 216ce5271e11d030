// gb10tune tune against the stand-in llama-server, whose speed follows its command line
// (STANDIN_SPEED): a tune that finishes and saves a profile launch starts, a budget that stops
// it, a candidate the plan refuses and that never starts (the server log's start headers prove
// it), Ctrl-C in the middle of a restart that leaves the original argv running, and --resume.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

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
  int port() const { return m_port; }
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

// Sets the captured machine's MemAvailable to `kib` kB.
void set_mem_available(const TuneWorld& world, std::uint64_t kib) {
  const fs::path meminfo = fs::path(world.root()) / "proc" / "meminfo";
  std::string text = read_text(meminfo);
  const auto at = text.find("MemAvailable:");
  ASSERT_NE(at, std::string::npos) << text;
  const auto end = text.find('\n', at);
  text.replace(at, end - at, fmt::format("MemAvailable:   {} kB", kib));
  std::ofstream(meminfo, std::ios::trunc) << text;
}

// The launch a new user runs: the model's own prompt cache (no --cache-ram), which launch's fit
// lowers until the plan fills the budget; then MemAvailable falls a little, as it does once the
// server runs. The draft knobs are measured all the same: draft_p_min changes no memory and is
// not re-planned; a draft depth (which changes the plan a little) runs with the prompt cache
// lowered by what is missing, and tune says so.
TEST(CliTune, AfterALaunchThatFilledTheBudgetTheDraftKnobsAreMeasuredNotRefused) {
  // No draft depth is better than the start's, so that p_min is tried on the start's depth.
  const TuneWorld world(std::map<std::string, std::string>{
      {"STANDIN_SPEED", "--spec-draft-n-max=5:0.9,--spec-draft-n-max=3:0.9"}});
  const auto [without_cache, available] = tune_plan_figures(world, {});  // --cache-ram 0
  // A reserve that leaves 64 MiB for the prompt cache: launch's fit lowers the model's default
  // (much more) to what fills the budget exactly.
  const auto reserve = static_cast<std::uint64_t>(available - without_cache) - (64ull << 20);
  std::vector<std::string> args = stand_in_launch_args(world.model(), world.port(), false);
  const auto cache = std::find(args.begin(), args.end(), "--cache-ram");
  ASSERT_NE(cache, args.end());
  args.erase(cache, cache + 2);
  const auto given_reserve = std::find(args.begin(), args.end(), "--reserve");
  ASSERT_NE(given_reserve, args.end());
  *(given_reserve + 1) = std::to_string(reserve);
  const auto launched = world.run(args);
  ASSERT_EQ(launched.exit_code, 0) << launched.out;
  const json plan = world.record()["plan"];
  const auto margin = plan.value("/plan/margin_bytes"_json_pointer, -1.0);
  EXPECT_GE(margin, 0) << plan.dump(1);
  EXPECT_LT(margin, 1 << 20) << "launch's fit fills the budget: " << plan.dump(1);
  const std::int64_t start_cache = plan.value("/settings/cache_ram_mib/value"_json_pointer, 0);
  ASSERT_GT(start_cache, 32) << plan.dump(1);
  ASSERT_LT(start_cache, 65) << plan.dump(1);
  // Free memory falls by 16 MiB once the server runs.
  set_mem_available(world, static_cast<std::uint64_t>(available) / 1024 - 16 * 1024);

  const auto tuned = world.run(
      {"tune", "--knobs", "draft_n_max,draft_p_min", "--budget", "2m", "--json", "--no-save"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  std::map<std::string, int> measured;
  for (const json& c : doc.at("candidates")) {
    EXPECT_NE(c.value("outcome", ""), "does not fit") << c.dump();
    EXPECT_NE(c.value("outcome", ""), "failed") << c.dump();
    ++measured[c.value("setting", "")];
  }
  EXPECT_GE(measured["draft_n_max"], 2) << doc.dump(1);
  EXPECT_GE(measured["draft_p_min"], 1) << doc.dump(1);
  EXPECT_TRUE(contains(tuned.out, "it runs with --cache-ram")) << tuned.out;
  // Each start: a draft depth with the prompt cache lowered, a p_min with the start's.
  bool lowered = false;
  bool p_min_as_started = false;
  for (const std::string& argv : world.starts()) {
    const bool depth = contains(argv, "--spec-draft-n-max 5 ");
    if (depth) {
      lowered = !contains(argv, fmt::format("--cache-ram {} ", start_cache));
    }
    if (contains(argv, "--spec-draft-p-min")) {
      p_min_as_started = contains(argv, fmt::format("--cache-ram {} ", start_cache));
    }
  }
  EXPECT_TRUE(lowered) << tuned.out;
  EXPECT_TRUE(p_min_as_started) << tuned.out;
}

// The flags finding `id` of a verify --json document's first server.
json verify_finding(const json& doc, const std::string& id) {
  for (const json& check : doc.at("servers").at(0).at("checks")) {
    if (check.value("group", "") == "flags" && check.value("id", "") == id) {
      return check;
    }
  }
  return nullptr;
}

// A tune measured flash attention off and draft depth 3 faster, against two rules (K9, K4): the
// tuned profile records each kept step, and launching it shows both rules as passed citing the
// tune (no warning), and verify --strict shows them as passed with the same citations.
TEST(CliTune, ALaunchOfTheTunedProfileCitesTheTuneAndVerifyPassesTheRules) {
  const TuneWorld world(std::map<std::string, std::string>{
      {"STANDIN_SPEED", "-fa=off:1.5,--spec-draft-n-max=3:1.3"}});
  ASSERT_EQ(world.launch().exit_code, 0);
  const auto tuned =
      world.run({"tune", "--knobs", "draft_n_max,flash_attn", "--budget", "2m", "--json"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  const json doc = tune_document(tuned);
  const std::string name = doc.at("profile").at("name");
  const json profile = json::parse(read_text(world.profiles() / (name + ".json")));
  std::map<std::string, json> changed;
  for (const json& change : profile.at("tuned").at("changes")) {
    changed[change.at("setting")] = change;
  }
  ASSERT_EQ(changed.size(), 2u) << profile.dump(1);
  EXPECT_EQ(changed["flash_attn"]["to"], "off") << profile.dump(1);
  EXPECT_GT(changed["flash_attn"]["ratio_low"].get<double>(), 1.0) << profile.dump(1);
  EXPECT_EQ(changed["draft_n_max"]["to"], 3) << profile.dump(1);

  ASSERT_EQ(world.stop().exit_code, 0);
  const auto launched = world.run({"launch", "--profile", name});
  ASSERT_EQ(launched.exit_code, 0) << launched.out;
  EXPECT_TRUE(contains(launched.out, "measured by a tune (outranks the rule)")) << launched.out;
  EXPECT_TRUE(contains(launched.out, "flash_attn off: measured by gb10tune tune on"))
      << launched.out;
  EXPECT_TRUE(contains(launched.out, "draft_n_max 3: measured by gb10tune tune on"))
      << launched.out;
  EXPECT_FALSE(contains(launched.out, "fix: pass -fa on")) << launched.out;
  EXPECT_FALSE(contains(launched.out, "fix: pass --spec-draft-n-max 4")) << launched.out;
  const json record = world.record();
  EXPECT_EQ(record.at("rules").at("measured").size(), 2u) << record.at("rules").dump(1);

  // verify reads the running server through the captured machine.
  const int pid = record.at("pid");
  fs::create_directory_symlink("/proc/" + std::to_string(pid),
                               fs::path(world.root()) / "proc" / std::to_string(pid));
  // The captured machine does not run the server's --help: the stand-in's own is given.
  const auto verified =
      world.run({"verify", "--strict", "--json", "--server-help",
                 fixture("llama-server/help-2026-08-commit-3f545be.txt").string()});
  const json checks = tune_document(verified);
  for (const char* id : {"flash-attention-on", "draft-n-max-4"}) {
    const json finding = verify_finding(checks, id);
    ASSERT_FALSE(finding.is_null()) << id << ":\n" << verified.out;
    EXPECT_EQ(finding.value("severity", ""), "ok") << finding.dump();
    EXPECT_TRUE(contains(finding.value("measured", ""), "measured by gb10tune tune on"))
        << finding.dump();
  }
  // Nothing the tuned settings do keeps --strict from passing: what is left is what the stand-in
  // on a captured machine without a GPU cannot show (where the model and its layers sit, with no
  // NVML and no log seen through the captured machine; its memory against the plan), which a
  // launch of the start's settings shows the same way.
  const std::set<std::string> captured_machine = {"device-memory-path", "plan-vs-measured",
                                                  "server-log", "all-layers-on-gpu"};
  for (const json& check : checks.at("servers").at(0).at("checks")) {
    if (check.value("severity", "") != "ok") {
      EXPECT_TRUE(captured_machine.count(check.value("id", "")) == 1) << check.dump();
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
  // The second candidate (draft depth 6) is loading: its start header is the last in the log,
  // and the stand-in has logged that it loads the model after it (the load takes 1.5 s, in
  // which tune waits for /health).
  const auto loading = [&world] {
    const auto starts = world.starts();
    if (starts.empty() || !contains(starts.back(), "--spec-draft-n-max 6 ")) {
      return false;
    }
    const std::string log = read_text(world.state() / "llama-server.log");
    return log.find("loading model '", log.rfind(" launch at ")) != std::string::npos;
  };
  ASSERT_TRUE(wait_until(loading, 120s)) << read_text(run.output);
  run.child->signal(SIGINT);
  const auto exit = run.wait(60s);
  ASSERT_TRUE(exit) << "tune did not end on SIGINT";
  EXPECT_EQ(exit->exit_status, 130) << read_text(run.output);
  const json restored = world.record();
  EXPECT_EQ(restored["argv"], original["argv"]);
  EXPECT_TRUE(runs_with(restored["pid"], restored["argv"])) << read_text(run.output);
  EXPECT_EQ(world.starts().back(), shell_join(original["argv"].get<std::vector<std::string>>()));
  EXPECT_TRUE(contains(read_text(run.output), "--resume")) << read_text(run.output);

  // --resume: the candidate measured before the interrupt (depth 5) is not measured again as a
  // candidate; it was kept, so it runs again only as the incumbent (measured around the next
  // candidate), and the resumed tune goes on from candidate 2.
  const std::vector<std::string> measured_before = world.starts();
  ASSERT_GE(measured_before.size(), 3u);
  const std::string first_candidate = measured_before[1];
  ASSERT_TRUE(contains(first_candidate, "--spec-draft-n-max 5 ")) << first_candidate;
  const auto resumed = world.run({"tune", "--resume", "--budget", "12s", "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const json doc = tune_document(resumed);
  ASSERT_GE(doc["candidates"].size(), 2u) << doc.dump(1);
  int depth_five = 0;
  for (const json& c : doc["candidates"]) {
    depth_five += c["setting"] == "draft_n_max" && c["value"] == 5 ? 1 : 0;
  }
  EXPECT_EQ(depth_five, 1) << doc.dump(1);
  EXPECT_EQ(doc["candidates"][0]["outcome"], "better");
  EXPECT_EQ(doc["candidates"][1]["index"], 2);
  EXPECT_EQ(world.record()["argv"], original["argv"]);
}

}  // namespace
}  // namespace gb10tune::testing

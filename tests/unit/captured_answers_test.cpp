// The answers of a real llama-server (commit 3f545be, 2026-08) captured in
// fixtures/llama-server/captured-2026-08-commit-3f545be/, against what gb10tune expects from
// the same command line: the parsers read them, every /props and /slots comparison of verify
// agrees with them, and speculative decoding is read from /slots (the build's /props says
// "none" even while every slot drafts).
#include <gtest/gtest.h>

#include <sstream>

#include "gb10tune/http/server_api.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/verify/checks.hpp"
#include "gb10tune/verify/flags_check.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::verify {
namespace {

const std::string kDir = "llama-server/captured-2026-08-commit-3f545be/";

std::string captured(const std::string& scenario, const std::string& what) {
  return testing::read_text(testing::fixture(kDir + scenario + "." + what));
}

// The command a capture came from, as argv ("llama-server -m … --port 18101").
std::vector<std::string> command_of(const std::string& scenario) {
  std::istringstream words(captured(scenario, "command.txt"));
  std::vector<std::string> argv;
  for (std::string word; words >> word;) {
    argv.push_back(word);
  }
  return argv;
}

// A probe that answers with the captured files.
class CapturedProbe final : public ServerProbe {
 public:
  explicit CapturedProbe(std::string scenario) : m_scenario(std::move(scenario)) {}
  HealthAnswer health() override { return {HealthState::ready, 200, ""}; }
  Expected<PropsAnswer> props() override {
    return read_props_answer(captured(m_scenario, "props.json"));
  }
  Expected<std::vector<SlotAnswer>> slots() override {
    return read_slots_answer(captured(m_scenario, "slots.json"));
  }
  Expected<SmokeTimings> smoke() override {
    const auto t = http::parse_completion_timings(captured(m_scenario, "completion.json"));
    if (!t) {
      return t.error();
    }
    return SmokeTimings{t->prompt_n, t->prompt_per_second, t->predicted_n, t->predicted_per_second,
                        t->draft_n,  t->draft_n_accepted};
  }

 private:
  std::string m_scenario;
};

// A machine whose filesystem holds the two models of the captures where the server read them
// (same headers: written by the tests' GGUF writer), and no config.ini.
struct CaptureMachine {
  CaptureMachine() : root(dir.path()) {
    std::filesystem::create_directories(dir.path() / "models");
    testing::tiny_qwen35_model(true).write(dir.path() / "models/tiny-qwen35-mtp.gguf");
    testing::tiny_qwen35_model(false).write(dir.path() / "models/tiny-qwen35.gguf");
  }

  // verify's flags check of a process started with the captured command.
  FlagsOutcome flags_of(const std::string& scenario) const {
    return flags_of_argv(command_of(scenario), "help-2026-08-commit-3f545be.txt");
  }

  // The same for `argv` and the --help fixture `help` of a build.
  FlagsOutcome flags_of_argv(std::vector<std::string> argv, const std::string& help) const {
    ProcessSnapshot snapshot;
    snapshot.process.stat.pid = 4242;
    snapshot.process.argv = std::move(argv);
    snapshot.env = platform::Environment();
    const auto text = testing::read_text(testing::fixture("llama-server/" + help));
    return check_flags(root, snapshot, server::ServerFlags::parse_help(text), nullptr);
  }

  testing::TempDir dir;
  platform::Sysroot root;
};

struct Capture {
  std::string scenario;
  std::uint32_t slots;
  std::uint64_t ctx_per_slot;  // what the server reported
  bool drafting;               // /slots `speculative`
  Severity speculative;        // verify's K4 finding on the server's answers
};

const Capture kCaptures[] = {
    {"mtp-3slots-kvu", 3, 24576, true, Severity::ok},
    {"mtp-1slot", 1, 8192, true, Severity::ok},
    {"mtp-1slot-over-train", 1, 32768, true, Severity::ok},  // -c 65536, capped at n_ctx_train
    // The MTP model without --spec-type: the model's head asks for it (K4).
    {"no-spec-3slots", 3, 8192, false, Severity::fail},
    {"defaults", 4, 32768, false, Severity::fail},  // -np unset: 4 slots, one unified pool
    {"no-mtp-model-1slot-kvu", 1, 8192, false, Severity::ok},
};

TEST(CapturedAnswers, PropsAlwaysShowTheRequestDefaultNotTheServersSpeculativeSetting) {
  for (const Capture& c : kCaptures) {
    const auto props = http::parse_props(captured(c.scenario, "props.json"));
    ASSERT_TRUE(props) << c.scenario << ": " << props.error().message;
    EXPECT_EQ(props->total_slots, c.slots) << c.scenario;
    EXPECT_EQ(props->n_ctx_per_slot, c.ctx_per_slot) << c.scenario;
    EXPECT_EQ(props->build_info, "b0-unknown") << c.scenario;  // built outside a git checkout
    // The bug of issue 18: "none" while every slot of the MTP captures drafts.
    EXPECT_EQ(props->speculative_types, "none") << c.scenario;
    const auto argv = command_of(c.scenario);
    EXPECT_EQ(props->model_path, argv.at(2)) << c.scenario;  // the -m argument as given

    const auto slots = http::parse_slots(captured(c.scenario, "slots.json"));
    ASSERT_TRUE(slots) << c.scenario << ": " << slots.error().message;
    ASSERT_EQ(slots->size(), c.slots) << c.scenario;
    for (const http::SlotInfo& slot : *slots) {
      EXPECT_EQ(slot.n_ctx, c.ctx_per_slot) << c.scenario;
      EXPECT_EQ(slot.speculative, c.drafting) << c.scenario;
      EXPECT_FALSE(slot.is_processing) << c.scenario;
    }
    // After a request the slot lists that request's parameters; still parseable.
    EXPECT_TRUE(http::parse_slots(captured(c.scenario, "slots-after.json"))) << c.scenario;

    const auto timings = http::parse_completion_timings(captured(c.scenario, "completion.json"));
    ASSERT_TRUE(timings) << c.scenario << ": " << timings.error().message;
    EXPECT_EQ(timings->draft_n.has_value(), c.drafting) << c.scenario;
  }
}

TEST(CapturedAnswers, VerifyExpectsWhatTheServerReported) {
  const CaptureMachine machine;
  for (const Capture& c : kCaptures) {
    const FlagsOutcome flags = machine.flags_of(c.scenario);
    EXPECT_EQ(flags.expected.slots, c.slots) << c.scenario;
    EXPECT_EQ(flags.expected.ctx_per_slot, c.ctx_per_slot) << c.scenario;
    CapturedProbe probe(c.scenario);
    ServerAnswers answers;
    const auto findings = check_server(probe, flags.expected, "http://127.0.0.1", &answers);
    ASSERT_EQ(findings.size(), 3u) << c.scenario;
    for (const Finding& finding : findings) {
      EXPECT_EQ(finding.severity, Severity::ok)
          << c.scenario << " " << finding.id << ": " << finding.evidence;
    }
    check_smoke(probe, &answers);
    const Finding spec = check_speculative(flags.expected, &flags.expected, answers);
    EXPECT_EQ(spec.severity, c.speculative) << c.scenario << ": " << spec.evidence;
    if (c.drafting) {
      EXPECT_NE(spec.evidence.find(fmt::format("on: /slots: {} of {}", c.slots, c.slots)),
                std::string::npos)
          << spec.evidence;
    }
    if (c.speculative == Severity::fail) {
      EXPECT_NE(spec.fix.find("--spec-type draft-mtp is missing"), std::string::npos) << spec.fix;
    }
  }
}

// -np unset is the build's own default: 4 slots sharing one pool in 3f545be (the "defaults"
// capture), 1 slot in the 2025-02 build (its --help says "default: 1").
TEST(CapturedAnswers, UnsetSlotsFollowTheBuildsDefault) {
  const CaptureMachine machine;
  const std::vector<std::string> argv = {"llama-server", "-m", "/models/tiny-qwen35-mtp.gguf", "-c",
                                         "8192"};
  const FlagsOutcome current = machine.flags_of_argv(argv, "help-2026-08-commit-3f545be.txt");
  EXPECT_EQ(current.expected.slots, 4u);
  EXPECT_EQ(current.expected.ctx_per_slot, 8192u);  // unified: every slot may use the pool
  const FlagsOutcome older = machine.flags_of_argv(argv, "help-2025-02-commit-c392e50.txt");
  EXPECT_EQ(older.expected.slots, 1u);
  EXPECT_EQ(older.expected.ctx_per_slot, 8192u);
  auto two = argv;
  two.insert(two.end(), {"-np", "2"});
  EXPECT_EQ(machine.flags_of_argv(two, "help-2025-02-commit-c392e50.txt").expected.ctx_per_slot,
            4096u);
}

// A launch record asking for draft-mtp, and the server restarted by hand without it.
TEST(CapturedAnswers, RecordAskingForMtpAgainstAServerWithoutItFails) {
  Expectations record;
  record.source = "launch record";
  record.slots = 3;
  record.ctx_per_slot = server_ctx_per_slot(24576, 3, false, 32768);
  record.speculative = true;
  record.spec_type = "draft-mtp";
  record.draft_n_max = 4;
  record.model_has_mtp = true;
  const CaptureMachine machine;
  const FlagsOutcome flags = machine.flags_of("no-spec-3slots");
  CapturedProbe probe("no-spec-3slots");
  ServerAnswers answers;
  check_server(probe, record, "u", &answers);
  const Finding spec = check_speculative(record, &flags.expected, answers);
  EXPECT_EQ(spec.severity, Severity::fail);
  EXPECT_NE(spec.evidence.find("off according to /slots, but the launch record asks for "
                               "draft-mtp: /slots: 0 of 3 slots speculative; flags: --spec-type "
                               "not set; launch record: draft-mtp, n-max 4"),
            std::string::npos)
      << spec.evidence;
}

}  // namespace
}  // namespace gb10tune::verify

// launch and verify judge one command the same way: for each tuning rule's bad setting, given
// where a user gives it (launch's own options, after --, LLAMA_ARG_*, config.ini), what launch
// says (refused, or each rule's severity in its --json document) is what verify then shows
// for the started server, rule by rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gb10tune/server/rules.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One bad setting and what both commands must say about its rule.
struct AgreeCase {
  std::string name;
  std::vector<std::string> args;  // launch options (and what follows --)
  std::vector<std::string> env;   // NAME=VALUE for launch (and so for the server)
  std::string config_ini;         // /etc/llama.cpp/config.ini of the machine; "" for none
  std::string rule;               // the rule it breaks; "" when every rule passes
  std::string action;             // what launch does: warned, chosen, refused (then forced), ok
  std::string severity;           // what verify shows: ok, warn, fail
};

// The JSON document in the combined output of a gb10tune run.
json agree_document(const std::string& output) {
  const auto begin = output.find("{\n");
  const auto end = output.rfind("\n}");
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    ADD_FAILURE() << "no JSON document in:\n" << output;
    return json();
  }
  return json::parse(output.substr(begin, end + 2 - begin));
}

// The finding `id` of verify's flags group.
json agree_verify_check(const json& doc, const std::string& id) {
  for (const json& check : doc["servers"][0]["checks"]) {
    if (check["group"] == "flags" && check["id"] == id) {
      return check;
    }
  }
  return nullptr;
}

// A GB10 (the gb10 fixture's /proc/cpuinfo and meminfo) around this machine's real files: the
// test's directory and, once started, the server's /proc/<pid> are reached through symlinks,
// so that launch and verify both see a GB10 and the running stand-in.
class AgreeMachine {
 public:
  AgreeMachine(const fs::path& work, const std::string& config_ini) {
    fs::copy(testing::sysroot_fixture("gb10"), m_root.path(), fs::copy_options::recursive);
    if (!config_ini.empty()) {
      m_root.write("etc/llama.cpp/config.ini", config_ini);
    }
    const fs::path mirror = m_root.path() / work.relative_path();
    fs::create_directories(mirror.parent_path());
    fs::create_directory_symlink(work, mirror);
  }
  void show_process(int pid) const {
    fs::create_directory_symlink("/proc/" + std::to_string(pid),
                                 m_root.path() / "proc" / std::to_string(pid));
  }
  std::string root() const { return m_root.path().string(); }

 private:
  testing::TempDir m_root;
};

// Stops what the launch started, whatever the test's assertions did.
struct AgreeStop {
  std::vector<std::string> env;
  ~AgreeStop() { testing::run_binary({"stop"}, env); }
};

const std::vector<AgreeCase> kAgreeCases = {
    AgreeCase{"tuned", {}, {}, "", "", "ok", "ok"},
    AgreeCase{
        "gpu_layers_option", {"--gpu-layers", "1"}, {}, "", "all-layers-on-gpu", "chosen", "warn"},
    AgreeCase{"flash_attn_option_off",
              {"--flash-attn", "off"},
              {},
              "",
              "flash-attention-on",
              "chosen",
              "warn"},
    AgreeCase{"flash_attn_option_auto",
              {"--flash-attn", "auto"},
              {},
              "",
              "flash-attention-on",
              "warned",
              "warn"},
    AgreeCase{"flash_attn_after_dashes",
              {"--", "-fa", "off"},
              {},
              "",
              "flash-attention-on",
              "refused",
              "fail"},
    AgreeCase{"flash_attn_config_ini", {}, {}, "[*]\nflash-attn = off\n", "", "ok", "ok"},
    AgreeCase{"no_mtp_option", {"--no-mtp"}, {}, "", "mtp-when-model-has-head", "chosen", "warn"},
    AgreeCase{
        "draft_depth_option", {"--draft-n-max", "3"}, {}, "", "draft-n-max-4", "warned", "warn"},
    AgreeCase{"backend_sampling_after_dashes",
              {"--", "-bs"},
              {},
              "",
              "no-backend-sampling-with-mtp",
              "refused",
              "fail"},
    AgreeCase{"backend_sampling_config_ini",
              {},
              {},
              "[*]\nbackend-sampling = true\n",
              "no-backend-sampling-with-mtp",
              "refused",
              "fail"},
    AgreeCase{
        "backend_sampling_environment", {}, {"LLAMA_ARG_BACKEND_SAMPLING=1"}, "", "", "ok", "ok"},
    AgreeCase{"no_kvu_option", {"--no-kvu"}, {}, "", "kvu-with-cache-ram", "chosen", "warn"},
    AgreeCase{"cache_ram_option_off",
              {"--cache-ram", "0"},
              {},
              "",
              "kvu-with-cache-ram",
              "warned",
              "warn"},
    AgreeCase{"mmap_after_dashes",
              {"--", "--load-mode", "mmap"},
              {},
              "",
              "no-mmap-on-gb10",
              "warned",
              "warn"}};

class CliLaunchVerifyAgree : public ::testing::TestWithParam<AgreeCase> {};

TEST_P(CliLaunchVerifyAgree, LaunchSaysWhatVerifyShows) {
  const AgreeCase& c = GetParam();
  testing::TempDir dir;
  const fs::path model = dir.path() / "tiny-qwen35.gguf";
  testing::tiny_qwen35_model().write(model);
  // The log says where the layers went, as -lv 4 does, so that verify judges -ngl by its rule.
  const fs::path extra_log =
      dir.write("layers.log",
                "load_tensors: offloaded 9/9 layers to GPU\n"
                "load_tensors:        CUDA0 model buffer size =     1.00 MiB\n");
  const AgreeMachine machine(dir.path(), c.config_ini);
  // env(1): the removals before the assignments.
  std::vector<std::string> env = {"-u",
                                  "XDG_CONFIG_HOME",
                                  "-u",
                                  "HOME",
                                  "XDG_STATE_HOME=" + (dir.path() / "state").string(),
                                  "STANDIN_LOAD_MS=100",
                                  "STANDIN_EXTRA_LOG=" + extra_log.string()};
  env.insert(env.end(), c.env.begin(), c.env.end());
  const AgreeStop stop{env};

  std::vector<std::string> args = {"--sysroot",      machine.root(),
                                   "launch",         "--json",
                                   "--model",        model.string(),
                                   "--llama-server", testing::stand_in_server_path().string(),
                                   "--slots",        "2",
                                   "--ctx-per-slot", "4096",
                                   "--port",         std::to_string(testing::free_tcp_port()),
                                   "--reserve",      "0",
                                   "--overhead",     "0"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  auto launched = testing::run_binary(args, env);
  if (c.action == "refused") {
    ASSERT_EQ(launched.exit_code, 2) << launched.out;
    EXPECT_NE(launched.out.find("--force"), std::string::npos) << launched.out;
    args.insert(args.begin() + 3, "--force");
    launched = testing::run_binary(args, env);
  }
  ASSERT_EQ(launched.exit_code, 0) << launched.out;
  const json started = agree_document(launched.out);
  ASSERT_TRUE(started.contains("rules")) << launched.out;
  ASSERT_EQ(started["rules"].size(), 7u) << started["rules"];
  machine.show_process(started["started"]["pid"].get<int>());

  const auto verified = testing::run_binary(
      {"--sysroot", machine.root(), "verify", "--json", "--server-help",
       testing::fixture("llama-server/help-2026-08-commit-3f545be.txt").string()},
      env);
  const json checks = agree_document(verified.out);
  for (const json& rule : started["rules"]) {
    const std::string id = rule["id"];
    const json shown = agree_verify_check(checks, id);
    ASSERT_FALSE(shown.is_null()) << id << " missing from verify:\n" << verified.out;
    EXPECT_EQ(rule["severity"], shown["severity"])
        << id << ": launch " << rule.dump() << "\nverify " << shown.dump();
    if (id == c.rule) {
      const std::string action = c.action == "refused" ? "forced" : c.action;
      EXPECT_EQ(rule["launch"], action) << rule.dump();
      EXPECT_EQ(shown["severity"], c.severity) << shown.dump();
      if (action == "forced") {
        EXPECT_NE(shown["evidence"].get<std::string>().find("launched with --force"),
                  std::string::npos)
            << shown.dump();
      }
      if (action != "ok") {
        // Never silent: the warning names the rule's fact.
        EXPECT_NE(launched.out.find("[" + rule["fact"].get<std::string>() + "]"), std::string::npos)
            << launched.out;
      }
    } else {
      EXPECT_EQ(rule["severity"], "ok") << rule.dump();
    }
  }
}

// Every rule verify checks has a bad setting above.
TEST(CliLaunchVerifyAgreeCases, CoverEveryRule) {
  for (const server::Finding& rule : server::check_rules({}, {})) {
    EXPECT_TRUE(std::any_of(kAgreeCases.begin(), kAgreeCases.end(),
                            [&](const AgreeCase& c) { return c.rule == rule.id; }))
        << rule.id << " has no case";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRule, CliLaunchVerifyAgree, ::testing::ValuesIn(kAgreeCases),
                         [](const ::testing::TestParamInfo<AgreeCase>& param) {
                           return param.param.name;
                         });

}  // namespace
}  // namespace gb10tune

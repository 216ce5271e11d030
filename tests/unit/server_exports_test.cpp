// The systemd unit launch --print systemd writes, read back as systemd reads it: the planned
// argv, the description and the working directory come back unchanged, and what a field cannot
// carry is refused.
#include "gb10tune/launch/server_exports.hpp"

#include <gtest/gtest.h>

#include "support/systemd_unit_reader.hpp"

namespace gb10tune::launch {
namespace {

TEST(SystemdUnitExport, EveryFieldReadsBackAsPlanned) {
  SystemdUnit unit;
  unit.argv = {"/opt/llama.cpp/bin/llama-server", "-m",
               "/models/odd 100% $HOME ${X} 'q' \"d\" \\ ;\nx \xC3\xA9.gguf", "--port", "8080"};
  unit.unset_env = {"GGML_CUDA_ENABLE_UNIFIED_MEMORY", "LLAMA_ARG_CTX_SIZE"};
  unit.description = "llama-server (odd 100% $HOME\nExecStartPre=/bin/false.gguf)";
  unit.working_directory = "/srv/odd dir/100% $HOME 'q' \"d\" ;x \xC3\xA9";
  const auto text = render_systemd_unit(unit);
  ASSERT_TRUE(text) << text.error().message;
  const testing::UnitReading reading = testing::read_unit(*text);
  std::vector<std::string> problems = reading.problems;
  for (const testing::UnitAssignment& a : reading.assignments) {
    EXPECT_NE(a.key, "ExecStartPre") << *text;
  }
  const auto exec = reading.values("Service", "ExecStart");
  ASSERT_EQ(exec.size(), 1u) << *text;
  EXPECT_EQ(testing::unit_exec_argv(exec[0], problems), unit.argv);
  EXPECT_EQ(reading.values("Service", "UnsetEnvironment"), unit.unset_env);
  const auto directory = reading.values("Service", "WorkingDirectory");
  ASSERT_EQ(directory.size(), 1u) << *text;
  EXPECT_EQ(testing::unit_specifiers_expanded(directory[0], problems), unit.working_directory);
  const auto description = reading.values("Unit", "Description");
  ASSERT_EQ(description.size(), 1u) << *text;
  EXPECT_EQ(testing::unit_specifiers_expanded(description[0], problems),
            "llama-server (odd 100% $HOME ExecStartPre=/bin/false.gguf)");
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << *text;
}

TEST(SystemdUnitExport, WhatAFieldCannotCarryIsRefused) {
  SystemdUnit unit;
  unit.argv = {"/opt/llama.cpp/bin/llama-server"};
  unit.working_directory = "/srv/line\nbreak";
  const auto directory = render_systemd_unit(unit);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code, ExitCode::usage);
  EXPECT_NE(directory.error().message.find("line break"), std::string::npos)
      << directory.error().message;

  unit.working_directory.clear();
  unit.unset_env = {"LLAMA_ARG_X\nExecStartPre=/bin/false"};
  EXPECT_FALSE(render_systemd_unit(unit));

  unit.unset_env.clear();
  unit.argv = {"./llama-server"};
  const auto relative = render_systemd_unit(unit);
  ASSERT_FALSE(relative);
  EXPECT_NE(relative.error().message.find("absolute path"), std::string::npos)
      << relative.error().message;
}

}  // namespace
}  // namespace gb10tune::launch

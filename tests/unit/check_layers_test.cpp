// scripts/check_layers.sh, the build's check of the layers: run on small trees with one planted
// violation each (it must fail, naming the file, the line and the rule) and on the project.
#include <gtest/gtest.h>

#include <string>

#include "gb10tune/platform/process.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// Runs the checker on `root`.
platform::CapturedRun check_layers_in(const std::filesystem::path& root) {
  const auto run = platform::run_capture(
      {"bash", std::string(GB10TUNE_SOURCE_DIR) + "/scripts/check_layers.sh", root.string()}, 60s);
  EXPECT_TRUE(run) << run.error().message;
  return run ? *run : platform::CapturedRun{};
}

// A tree that keeps every layer: a util header, a platform file over util, a core file over
// platform, a CLI file over the core.
void write_clean_tree(const TempDir& dir) {
  dir.write("include/gb10tune/util/expected.hpp", "#pragma once\n#include <string>\n");
  dir.write("include/gb10tune/platform/fd.hpp",
            "#pragma once\n#include \"gb10tune/util/expected.hpp\"\n");
  dir.write("src/platform/fd.cpp",
            "#include \"gb10tune/platform/fd.hpp\"\n#include <unistd.h>\n"
            "void close_it(int fd) { ::close(fd); }\n");
  dir.write("include/gb10tune/launch/stop.hpp", "#pragma once\nvoid stop(int pid);\n");
  dir.write("src/core/launch/stop.cpp",
            "#include \"gb10tune/launch/stop.hpp\"\n#include \"gb10tune/platform/fd.hpp\"\n"
            "#include \"helper.hpp\"\n#include <csignal>\n"
            "// kill(pid, SIGTERM) is what platform does; a comment is not a call\n"
            "struct Handle { int kill(int); int read(void*); };\n"
            "void stop(Handle& handle, Handle* other, int pid) {\n"
            "  handle.kill(SIGTERM);\n  other->read(nullptr);\n  Fd::open(pid);\n"
            "  const char* text = \"cannot open(2) it\";\n}\n");
  dir.write("src/core/launch/helper.hpp", "#pragma once\n");
  dir.write("src/cli/stop_command.cpp",
            "#include \"cli/failure.hpp\"\n#include \"gb10tune/launch/stop.hpp\"\n");
}

TEST(CheckLayers, ACleanTreePasses) {
  const TempDir dir;
  write_clean_tree(dir);
  const auto run = check_layers_in(dir.path());
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "keep their layers")) << run.output;
}

TEST(CheckLayers, TheProjectKeepsItsLayers) {
  const auto run = check_layers_in(GB10TUNE_SOURCE_DIR);
  EXPECT_EQ(run.exit_status, 0) << run.output;
}

TEST(CheckLayers, AFolderWithoutSourcesIsAnError) {
  const TempDir dir;  // a wrong folder must not pass as a clean one
  const auto run = check_layers_in(dir.path());
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "no C++ sources under")) << run.output;
}

// Each planted file breaks one rule; the checker fails and names file, line and rule.
struct Plant {
  std::string path;
  std::string content;
  std::string expected;  // a part of the report
};

class CheckLayersPlant : public ::testing::TestWithParam<Plant> {};

TEST_P(CheckLayersPlant, FailsNamingTheFileTheLineAndTheRule) {
  const TempDir dir;
  write_clean_tree(dir);
  dir.write(GetParam().path, GetParam().content);
  const auto run = check_layers_in(dir.path());
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, GetParam().expected)) << run.output;
  EXPECT_TRUE(contains(run.output, "1 violation(s)")) << run.output;
}

INSTANTIATE_TEST_SUITE_P(
    Violations, CheckLayersPlant,
    ::testing::Values(
        Plant{"src/platform/endpoint.cpp",
              "#include \"gb10tune/platform/fd.hpp\"\n#include \"gb10tune/bench/server.hpp\"\n",
              "src/platform/endpoint.cpp:2: includes \"gb10tune/bench/server.hpp\" (the platform "
              "layer may include only: platform util)"},
        Plant{"include/gb10tune/platform/gpu.hpp",
              "#pragma once\n#include \"gb10tune/gpu/info.hpp\"\n",
              "include/gb10tune/platform/gpu.hpp:2: includes \"gb10tune/gpu/info.hpp\""},
        Plant{"src/util/strings.cpp", "#include \"gb10tune/platform/fd.hpp\"\n",
              "src/util/strings.cpp:1: includes \"gb10tune/platform/fd.hpp\" (the util layer may "
              "include only: util)"},
        Plant{"src/core/launch/start.cpp", "#include \"cli/failure.hpp\"\n",
              "src/core/launch/start.cpp:1: includes \"cli/failure.hpp\" (the core layer may "
              "include only: core platform kernels util)"},
        Plant{"src/platform/up.cpp", "#include \"../core/launch/helper.hpp\"\n",
              "src/platform/up.cpp:1: includes \"../core/launch/helper.hpp\""},
        Plant{"src/core/launch/start.cpp", "#include <fmt/format.h>\n#include <sys/wait.h>\n",
              "src/core/launch/start.cpp:2: includes <sys/wait.h> (the core layer reaches the OS "
              "only through src/platform)"},
        Plant{"src/core/http/tls.cpp", "#include <openssl/ssl.h>\n",
              "src/core/http/tls.cpp:1: includes <openssl/ssl.h> (the core layer reaches the OS "
              "only through src/platform)"},
        Plant{"src/core/launch/start.cpp", "void f(int pid) {\n  ::kill(pid, 15);\n}\n",
              "src/core/launch/start.cpp:2: uses kill (the core layer reaches the OS only through "
              "src/platform)"},
        Plant{"src/core/launch/start.cpp", "int f(int fd, char* b) { return read(fd, b, 1); }\n",
              "src/core/launch/start.cpp:1: uses read"},
        Plant{"src/core/gguf/open.cpp",
              "int f(const char* p) {\n  const int fd =\n"
              "      ::open(p, 0);\n  return fd;\n}\n",
              "src/core/gguf/open.cpp:3: uses open"},
        Plant{"include/gb10tune/launch/env.hpp", "#pragma once\nextern char** environ;\n",
              "include/gb10tune/launch/env.hpp:2: uses environ"},
        Plant{"src/core/launch/start.cpp", "void f() { std::system(\"ls\"); }\n",
              "src/core/launch/start.cpp:1: uses std::system"},
        Plant{"src/util/temp.cpp", "void f(char* p) { if (mkdtemp(p) == nullptr) {} }\n",
              "src/util/temp.cpp:1: uses mkdtemp (the util layer reaches the OS only through "
              "src/platform)"},
        Plant{"src/cli/main_entry.cpp", "bool tty() { return isatty(1); }\n",
              "src/cli/main_entry.cpp:1: uses isatty (the cli layer reaches the OS only through "
              "src/platform)"}));

}  // namespace
}  // namespace gb10tune::testing

// The one shell quoting: what bash reads back from a quoted command is the argv it came from.
#include "gb10tune/util/shell_quote.hpp"

#include <gtest/gtest.h>

#include "gb10tune/platform/process.hpp"

namespace gb10tune {
namespace {

TEST(ShellQuote, SafeWordsStayAndOthersAreSingleQuoted) {
  EXPECT_EQ(shell_quote("-DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod"),
            "-DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod");
  EXPECT_EQ(shell_quote("/models/a_b,c:d@e%f.gguf"), "/models/a_b,c:d@e%f.gguf");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("90-real;121a-real"), "'90-real;121a-real'");
  EXPECT_EQ(shell_join({"llama-server", "-m", "my model.gguf", ""}),
            "llama-server -m 'my model.gguf' ''");
}

// Pasted into a shell, the joined command is exactly the argv.
TEST(ShellQuote, TheShellReadsBackEveryWord) {
  const std::vector<std::string> words = {"plain",
                                          "",
                                          "two words",
                                          "it's",
                                          "'",
                                          "\"d\" \\ $HOME ${X} `id` $(id)",
                                          "a;b|c&d>e<f",
                                          "*?[x]~#!",
                                          "line\nbreak\ttab",
                                          "\xC3\xA9t\xC3\xA9",
                                          "--opt=value with spaces"};
  std::string script = "printf '%s\\0'";
  for (const std::string& word : words) {
    script += " " + shell_quote(word);
  }
  const auto run = platform::run_capture({"/bin/sh", "-c", script}, std::chrono::seconds(10));
  ASSERT_TRUE(run) << run.error().message;
  ASSERT_EQ(run->exit_status, 0) << run->output;
  std::vector<std::string> back;
  std::string current;
  for (const char c : run->output) {
    if (c == '\0') {
      back.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  EXPECT_EQ(back, words);
}

}  // namespace
}  // namespace gb10tune

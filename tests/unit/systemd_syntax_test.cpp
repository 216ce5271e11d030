// Values written into systemd units read back, as systemd reads them, to exactly the text
// given: odd paths (%, $, \, quotes, blanks, a line break, ';', non-ASCII) never expand, split
// or add a directive; what a setting cannot carry is refused.
#include "gb10tune/util/systemd_syntax.hpp"

#include <gtest/gtest.h>

#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"

namespace gb10tune::systemd {
namespace {

// Everything a path may hold that means something to systemd or a shell.
const std::string kOddText =
    "/srv/odd dir/100% %h $HOME ${HOME} $$ \\back\\slash 'single' \"double\" ;semi ; "
    "tab\there\nnew line \xC3\xA9 \xE6\xA8\xA1\xE5\x9E\x8B";

// The unit line `key=value` read back by the reader: its one assignment's value.
std::string syntax_read_back(const std::string& key, const std::string& value,
                             std::vector<std::string>& problems) {
  const auto reading = testing::read_unit("[Service]\n" + key + "=" + value + "\n");
  problems.insert(problems.end(), reading.problems.begin(), reading.problems.end());
  EXPECT_EQ(reading.assignments.size(), 1u) << value;
  return reading.assignments.empty() ? std::string() : reading.assignments.front().value;
}

TEST(SystemdSyntax, ExecLineRunsExactlyTheArgv) {
  const std::vector<std::string> argv = {"/opt/llama.cpp/build/bin/llama-server",
                                         "--model",
                                         kOddText,
                                         ";",
                                         "",
                                         "$HOME",
                                         "${HOME}",
                                         "%h",
                                         "ends in a backslash\\",
                                         "not utf-8 \xFF\xFE",
                                         "-\x01\x7F",
                                         "--alias=x'y"};
  const auto line = exec_line(argv);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(line->find('\n'), std::string::npos) << *line;
  EXPECT_EQ(line->find('\r'), std::string::npos) << *line;
  std::vector<std::string> problems;
  const std::string value = syntax_read_back("ExecStart", *line, problems);
  EXPECT_EQ(testing::unit_exec_argv(value, problems), argv) << *line;
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << *line;
}

TEST(SystemdSyntax, PlainWordsStayUnquoted) {
  const auto line = exec_line({"llama-server", "-c", "4096", "--host", "127.0.0.1"});
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "llama-server -c 4096 --host 127.0.0.1");
  EXPECT_EQ(*exec_line({"/opt/100%/x", "50%", "$x"}), "/opt/100%%/x 50%% $$x");
  EXPECT_EQ(*exec_line({"/opt/my dir;x/llama-server"}), "\"/opt/my dir;x/llama-server\"");
}

TEST(SystemdSyntax, AProgramSystemdWouldRefuseOrChangeIsRefused) {
  for (const std::string program :
       {"", "-/usr/bin/x", "@/usr/bin/x", ":/usr/bin/x", "+x", "!x", "|x", "/opt/it's/x",
        "/opt/a\"b/x", "/opt/a\\b/x", "/opt/$x/bin", "/opt/line\nbreak/x", "/opt/\xFF/x",
        "bin/llama-server", "/opt/bin/", ".."}) {
    const auto line = exec_line({program, "--help"});
    ASSERT_FALSE(line) << *line;
    EXPECT_EQ(line.error().code, ExitCode::usage);
    EXPECT_NE(line.error().message.find("ExecStart="), std::string::npos) << line.error().message;
    EXPECT_EQ(line.error().message.find('\n'), std::string::npos) << line.error().message;
  }
  EXPECT_FALSE(exec_line({}));
  for (const std::string program :
       {"llama-server", "/opt/my dir/llama-server", "/opt/100%/x", "/opt/\xC3\xA9/x"}) {
    EXPECT_TRUE(exec_line({program})) << program;
  }
}

TEST(SystemdSyntax, EnvironmentAssignmentReadsBackAsSet) {
  const std::string value = kOddText + " \x01 end\\";
  const auto assignment = environment_assignment("XDG_STATE_HOME", value);
  ASSERT_TRUE(assignment) << assignment.error().message;
  EXPECT_EQ(assignment->find('\n'), std::string::npos) << *assignment;
  std::vector<std::string> problems;
  const std::string read = syntax_read_back("Environment", *assignment, problems);
  const auto pairs = testing::unit_environment(read, problems);
  ASSERT_EQ(pairs.size(), 1u) << *assignment;
  EXPECT_EQ(pairs[0].first, "XDG_STATE_HOME");
  EXPECT_EQ(pairs[0].second, value);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  // '$' means nothing in Environment=: written once, read once.
  EXPECT_EQ(*environment_assignment("A", "$x %y"), "\"A=$x %%y\"");
}

TEST(SystemdSyntax, EnvironmentRefusesWhatSystemdWouldDrop) {
  for (const std::string name : {"", "1X", "A-B", "A=B", "A B", "\xC3\xA9"}) {
    const auto refused = environment_assignment(name, "v");
    ASSERT_FALSE(refused) << name;
    EXPECT_EQ(refused.error().code, ExitCode::usage);
    EXPECT_FALSE(variable_name(name)) << name;
  }
  const auto not_utf8 = environment_assignment("XDG_STATE_HOME", "/home/\xFF");
  ASSERT_FALSE(not_utf8);
  EXPECT_NE(not_utf8.error().message.find("XDG_STATE_HOME"), std::string::npos);
  EXPECT_EQ(*variable_name("GGML_CUDA_ENABLE_UNIFIED_MEMORY"), "GGML_CUDA_ENABLE_UNIFIED_MEMORY");
}

TEST(SystemdSyntax, DirectoryPathIsWrittenAsIsWithPercentDoubled) {
  const std::string path = "/srv/odd dir/100% $HOME 'q' \"d\" ;x \\mid \xC3\xA9";
  const auto written = directory_path(path);
  ASSERT_TRUE(written) << written.error().message;
  std::vector<std::string> problems;
  const std::string read = syntax_read_back("WorkingDirectory", *written, problems);
  EXPECT_EQ(testing::unit_specifiers_expanded(read, problems), path);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

TEST(SystemdSyntax, DirectoryPathRefusesWhatCannotBeWritten) {
  for (const std::string path :
       {"", "relative/dir", "~", "/srv/line\nbreak", "/srv/cr\r", "/srv/tab\tdir", "/srv/trailing ",
        "/srv/trailing\\", "/srv/../etc", "/srv/..", "/srv/\xFF"}) {
    const auto refused = directory_path(path);
    ASSERT_FALSE(refused) << path;
    EXPECT_EQ(refused.error().code, ExitCode::usage);
    EXPECT_EQ(refused.error().message.find('\n'), std::string::npos) << refused.error().message;
  }
}

TEST(SystemdSyntax, DescriptionIsOneLineOfPlainText) {
  const std::string text = "  llama-server (" + kOddText + "\r\x01\x7F\xFF) \\\\\\ ";
  const std::string written = description(text);
  EXPECT_EQ(written.find_first_of("\n\r\x01\x7F"), std::string::npos) << written;
  std::vector<std::string> problems;
  const std::string read = syntax_read_back("Description", written, problems);
  const std::string shown = testing::unit_specifiers_expanded(read, problems);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  EXPECT_EQ(shown.rfind("llama-server (/srv/odd dir/100% %h $HOME", 0), 0u) << shown;
  EXPECT_NE(shown.find("tab here new line \xC3\xA9"), std::string::npos) << shown;
  EXPECT_NE(shown.find("   \xEF\xBF\xBD)"), std::string::npos) << shown;
  EXPECT_EQ(shown.back(), ')') << shown;
}

TEST(SystemdSyntax, ACommentCannotEndOrContinueItsLine) {
  const std::string comment = comment_line("worker evil\nExecStartPre=/bin/false\r;x \\");
  EXPECT_EQ(comment, "# worker evil ExecStartPre=/bin/false ;x\n");
  const auto reading = testing::read_unit("[Service]\n" + comment + "Type=exec\n");
  ASSERT_EQ(reading.assignments.size(), 1u);
  EXPECT_EQ(reading.assignments[0].key, "Type");
}

// systemd itself reads the unit back, where systemd-analyze is installed.
TEST(SystemdSyntax, SystemdAnalyzeReadsTheSameValues) {
  testing::TempDir dir;
  const auto program = dir.write("bin/llama server", "#!/bin/sh\n", true);
  const std::vector<std::string> argv = {program.string(), "--model",       kOddText, ";", "",
                                         "$HOME",          "not utf-8 \xFF"};
  const std::string env_value = kOddText + " end\\";
  const std::string work_dir = "/srv/odd dir/100% $HOME 'q' \"d\" ;x \\mid \xC3\xA9";
  const std::string unit = "[Unit]\nDescription=" + description("model " + kOddText) +
                           "\n[Service]\nType=exec\nExecStart=" + *exec_line(argv) +
                           "\nEnvironment=" + *environment_assignment("XDG_STATE_HOME", env_value) +
                           "\nWorkingDirectory=" + *directory_path(work_dir) + "\n";
  std::string why;
  const auto analyzed = testing::systemd_analyze(dir.path(), "odd.service", unit, why);
  if (!analyzed) {
    ASSERT_FALSE(testing::systemd_analyze_required()) << "GB10TUNE_REQUIRE_SYSTEMD=1: " << why;
    GTEST_SKIP() << why;
  }
  EXPECT_TRUE(analyzed->warnings.empty()) << ::testing::PrintToString(analyzed->warnings) << "\n"
                                          << unit;
  EXPECT_EQ(analyzed->argv, argv) << analyzed->output;
  ASSERT_EQ(analyzed->environment.size(), 1u) << analyzed->output;
  EXPECT_EQ(analyzed->environment[0], "XDG_STATE_HOME=" + env_value);
  EXPECT_EQ(analyzed->working_directory, work_dir);
  std::vector<std::string> problems;
  EXPECT_EQ(analyzed->description,
            testing::unit_specifiers_expanded(description("model " + kOddText), problems));
}

}  // namespace
}  // namespace gb10tune::systemd

#include "gb10tune/sys/process_info.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "support/test_context.hpp"

namespace gb10tune::sys {
namespace {

using testing::sysroot_fixture;
using testing::TempDir;

std::string stat_line(std::string_view comm, char state = 'S', std::uint64_t start = 777,
                      int pid = 4242) {
  std::string fields =
      fmt::format("{} 1 10 10 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 {}", state, start);
  for (int i = 0; i < 30; ++i) {
    fields += " 0";
  }
  return fmt::format("{} ({}) {}\n", pid, comm, fields);
}

TEST(ProcessStat, ParsesTheFieldsThatIdentifyAProcess) {
  const auto stat = parse_process_stat(stat_line("llama-server"), "stat");
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->comm, "llama-server");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->start_time_ticks, 777u);
  EXPECT_FALSE(stat->exited());
}

TEST(ProcessStat, NameWithParenthesesAndSpacesIsCutAtTheLastParenthesis) {
  const auto stat = parse_process_stat(stat_line("a) (Z 9 b", 'R', 31337), "stat");
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->comm, "a) (Z 9 b");
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->start_time_ticks, 31337u);
}

TEST(ProcessStat, ZombieIsExited) {
  const auto stat = parse_process_stat(stat_line("llama-server", 'Z'), "stat");
  ASSERT_TRUE(stat);
  EXPECT_TRUE(stat->exited());
}

TEST(ProcessStat, MalformedTextIsAnErrorNamingTheSource) {
  for (const std::string& text :
       {std::string(""), std::string("4242 llama-server S 1"), std::string("4242 (x) S 1 2 3"),
        std::string("abc (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5"),
        std::string("4242 (x) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5"),
        std::string("4242 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 soon")}) {
    const auto stat = parse_process_stat(text, "/proc/4242/stat");
    ASSERT_FALSE(stat) << text;
    EXPECT_EQ(stat.error().failure, ProcFailure::malformed);
    EXPECT_NE(stat.error().message.find("/proc/4242/stat"), std::string::npos);
  }
}

TEST(ProcessCmdline, SplitsAtNulsWithOrWithoutTheLastOne) {
  using namespace std::string_literals;
  EXPECT_EQ(split_nul("a\0b c\0\0d\0"s), (std::vector<std::string>{"a", "b c", "", "d"}));
  EXPECT_EQ(split_nul("a\0b"s), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_nul("").empty());
}

TEST(ProcessMemory, StatusGivesTheRssSplit) {
  const auto memory = parse_status_memory(
      "Name:\tllama-server\nVmRSS:\t  94371840 kB\nRssAnon:\t93323264 kB\nRssFile:\t921600 "
      "kB\nRssShmem:\t   0 kB\n",
      "status");
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->vm_rss, 94371840ull * 1024);
  EXPECT_EQ(memory->rss_anon, 93323264ull * 1024);
  EXPECT_EQ(memory->rss_file, 921600ull * 1024);
  EXPECT_EQ(memory->rss_shmem, 0u);
  EXPECT_FALSE(memory->vm_hwm);  // no VmHWM line: the peak is unknown
}

// VmHWM, the most the process has held: what a plan must not be below.
TEST(ProcessMemory, StatusGivesThePeak) {
  const auto memory = parse_status_memory(
      "VmHWM:\t  1282708 kB\nVmRSS:\t  546572 kB\nRssAnon:\t542468 kB\nRssFile:\t4104 kB\n",
      "status");
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->vm_hwm, 1282708ull * 1024);
  EXPECT_EQ(memory->vm_rss, 546572ull * 1024);
}

TEST(ProcessMemory, StatusWithoutRssLinesIsAnError) {
  const auto memory = parse_status_memory("Name:\tllama-server\nState:\tZ (zombie)\n", "status");
  ASSERT_FALSE(memory);
  EXPECT_EQ(memory.error().failure, ProcFailure::malformed);
  EXPECT_FALSE(parse_status_memory("VmRSS:\tlots kB\nRssAnon:\t1 kB\n", "status"));
}

TEST(ProcessMemory, SmapsRollupDerivesTheFilePart) {
  const auto memory = parse_smaps_rollup_memory(
      "00400000-ffffe000 ---p 00000000 00:00 0   [rollup]\nRss:   1000 kB\nPss:  900 kB\n"
      "Pss_Shmem:  100 kB\nAnonymous:   600 kB\n",
      "smaps_rollup");
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->vm_rss, 1000u * 1024);
  EXPECT_EQ(memory->rss_anon, 600u * 1024);
  EXPECT_EQ(memory->rss_file, 300u * 1024);
}

TEST(ProcessMemory, FallsBackToSmapsRollupWhenStatusHasNoRssLines) {
  TempDir dir;
  dir.write("proc/7/status", "Name:\tllama-server\nVmRSS:\t2048 kB\n");
  dir.write("proc/7/smaps_rollup", "Rss:  2048 kB\nAnonymous:  1024 kB\n");
  const auto memory = read_process_memory(platform::Sysroot(dir.path()), 7);
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->rss_anon, 1024u * 1024);
  EXPECT_NE(memory->source.find("smaps_rollup"), std::string::npos);
}

TEST(ProcessEnviron, ReadsEveryVariableAndKeepsEmptyValues) {
  TempDir dir;
  using namespace std::string_literals;
  dir.write("proc/7/environ", "A=1\0GGML_CUDA_ENABLE_UNIFIED_MEMORY=\0junk\0B=x=y\0"s);
  const auto env = read_process_environ(platform::Sysroot(dir.path()), 7);
  ASSERT_TRUE(env);
  EXPECT_TRUE(env->contains("GGML_CUDA_ENABLE_UNIFIED_MEMORY"));
  EXPECT_EQ(env->get("B"), "x=y");
  EXPECT_EQ(env->vars().size(), 3u);
}

TEST(ProcessEnviron, PermissionDeniedIsDistinctFromVanished) {
  const platform::Sysroot root(sysroot_fixture("verify-unreadable"));
  const auto denied = read_process_environ(root, 4242);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().failure, ProcFailure::permission_denied);
  EXPECT_NE(denied.error().message.find("sudo"), std::string::npos) << denied.error().message;

  const auto gone = read_process_environ(root, 31999);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().failure, ProcFailure::vanished);
}

TEST(ProcessEnviron, RealUnreadableFileIsPermissionDenied) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root reads every file; the fixture's .errno marker covers this case";
  }
  TempDir dir;
  const auto path = dir.write("proc/7/environ", "A=1");
  ::chmod(path.c_str(), 0);
  const auto env = read_process_environ(platform::Sysroot(dir.path()), 7);
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().failure, ProcFailure::permission_denied);
}

TEST(ProcessExe, ReadsTheLinkTextWithoutFollowingIt) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "proc/7");
  std::filesystem::create_symlink("/nonexistent/bin/llama-server (deleted)",
                                  dir.path() / "proc/7/exe");
  const auto exe = read_process_exe(platform::Sysroot(dir.path()), 7);
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_EQ(exe->path, "/nonexistent/bin/llama-server");
  EXPECT_TRUE(exe->deleted);
  EXPECT_EQ(exe->basename(), "llama-server");
}

TEST(ProcessExe, LiveProcessReadsItsOwnExecutable) {
  const platform::Sysroot live;
  const auto exe = read_process_exe(live, static_cast<int>(::getpid()));
  ASSERT_TRUE(exe) << exe.error().message;
  EXPECT_EQ(exe->basename(), "gb10tune_tests");
  const auto stat = read_process_stat(live, static_cast<int>(::getpid()));
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->ppid, static_cast<int>(::getppid()));
  EXPECT_GT(stat->start_time_ticks, 0u);
  const auto env = read_process_environ(live, static_cast<int>(::getpid()));
  ASSERT_TRUE(env);
}

TEST(FindLlamaServers, FindsTheServerNotTheEditorWhoseArgumentsNameIt) {
  const auto found = find_llama_servers(platform::Sysroot(sysroot_fixture("verify-clean")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].stat.pid, 4242);
  EXPECT_EQ(found[0].kind, CandidateKind::server);
  EXPECT_EQ(found[0].matched_by, "exe");
  EXPECT_EQ(found[0].argv.at(0), "/opt/llama.cpp/build/bin/llama-server");
}

TEST(FindLlamaServers, ScriptNamedLlamaServerIsAScript) {
  const auto found = find_llama_servers(platform::Sysroot(sysroot_fixture("verify-script")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].stat.pid, 5000);
  EXPECT_EQ(found[0].kind, CandidateKind::script);
  EXPECT_EQ(found[0].matched_by, "comm");
}

TEST(FindLlamaServers, ZombieIsExited) {
  const auto found = find_llama_servers(platform::Sysroot(sysroot_fixture("verify-zombie")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, CandidateKind::exited);
  EXPECT_FALSE(found[0].exe);
  EXPECT_TRUE(found[0].argv.empty());
}

// One test of "a running llama-server" for every caller: a zombie (or a dead process) is none,
// nor is a script or another program carrying the name.
TEST(FindRunningServers, OnlyLiveLlamaServersCount) {
  EXPECT_TRUE(find_running_servers(platform::Sysroot(sysroot_fixture("verify-zombie"))).empty());
  EXPECT_TRUE(find_running_servers(platform::Sysroot(sysroot_fixture("verify-script"))).empty());
  const auto found = find_running_servers(platform::Sysroot(sysroot_fixture("verify-clean")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].stat.pid, 4242);
  for (const char state : {'Z', 'X'}) {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "proc/77");
    dir.write("proc/77/stat", stat_line("llama-server", state, 1, 77));
    std::filesystem::create_symlink("/opt/llama.cpp/llama-server", dir.path() / "proc/77/exe");
    EXPECT_TRUE(find_running_servers(platform::Sysroot(dir.path())).empty()) << state;
    dir.write("proc/77/stat", stat_line("llama-server", 'S', 1, 77));
    EXPECT_EQ(find_running_servers(platform::Sysroot(dir.path())).size(), 1u) << state;
  }
}

TEST(FindLlamaServers, UnreadableExeIsFoundByArgv0AndStaysACandidate) {
  const auto found = find_llama_servers(platform::Sysroot(sysroot_fixture("verify-unreadable")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, CandidateKind::server);
  EXPECT_EQ(found[0].matched_by, "argv[0]");
  ASSERT_TRUE(found[0].exe_error);
  EXPECT_EQ(found[0].exe_error->failure, ProcFailure::permission_denied);
}

TEST(FindLlamaServers, ArgvZeroRenamedProgramIsForeign) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "proc/12");
  dir.write("proc/12/stat", stat_line("top", 'S', 777, 12));
  using namespace std::string_literals;
  dir.write("proc/12/cmdline", "llama-server\0-m\0x\0"s);
  std::filesystem::create_symlink("/usr/bin/top", dir.path() / "proc/12/exe");
  const auto found = find_llama_servers(platform::Sysroot(dir.path()));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, CandidateKind::foreign);
  EXPECT_EQ(found[0].matched_by, "argv[0]");
}

TEST(InspectProcess, UnreadableExeOfAnotherProgramIsNotAServer) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "proc/1");
  dir.write("proc/1/stat", stat_line("process_api", 'S', 5, 1));
  using namespace std::string_literals;
  dir.write("proc/1/cmdline", "/process_api\0--firecracker-init\0"s);
  dir.write("proc/1/exe.errno", "EACCES\n");
  const auto other = inspect_process(platform::Sysroot(dir.path()), 1);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->kind, CandidateKind::other);
  // The same unreadable link with llama-server's name stays a server to check.
  dir.write("proc/1/cmdline", "/opt/llama-server\0-m\0x\0"s);
  const auto named = inspect_process(platform::Sysroot(dir.path()), 1);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->kind, CandidateKind::server);
}

}  // namespace
}  // namespace gb10tune::sys

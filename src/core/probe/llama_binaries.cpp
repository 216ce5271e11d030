#include "gb10tune/probe/llama_binaries.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/file_facts.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::probe {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kBinaryName = "llama-server";

// Build folders people use for a source build of llama.cpp, relative to $HOME.
constexpr std::string_view kHomeBuildDirs[] = {
    "llama.cpp/build/bin",     "src/llama.cpp/build/bin",      "code/llama.cpp/build/bin",
    "git/llama.cpp/build/bin", "projects/llama.cpp/build/bin", "llama.cpp/build-cuda/bin",
};
constexpr std::string_view kSystemBuildDirs[] = {"/opt/llama.cpp/build/bin"};

// Parses "(build 11312, commit abc)" or "(abc1234)" after the version word.
void parse_parenthesised(std::string_view inner, LlamaVersion& out) {
  for (std::string_view part : split(inner, ',')) {
    part = trim(part);
    if (starts_with(part, "build ")) {
      out.build = std::string(trim(part.substr(6)));
    } else if (starts_with(part, "commit ")) {
      out.commit = std::string(trim(part.substr(7)));
    } else if (!part.empty() && out.commit.empty()) {
      out.commit = std::string(part);  // the old layout: "version: 6210 (3f545be)"
    }
  }
}

}  // namespace

LlamaVersion parse_llama_version(std::string_view output) {
  LlamaVersion out;
  for (std::string_view line : split(output, '\n')) {
    line = trim(line);
    if (out.version.empty() && starts_with(line, "version")) {
      std::string_view rest = line.substr(7);
      if (!rest.empty() && rest.front() == ':') {
        rest.remove_prefix(1);
      }
      rest = trim(rest);
      const std::size_t paren = rest.find('(');
      out.version = std::string(trim(rest.substr(0, paren)));
      if (paren != std::string_view::npos) {
        const std::size_t close = rest.find(')', paren);
        parse_parenthesised(
            rest.substr(paren + 1, close == std::string_view::npos ? std::string_view::npos
                                                                   : close - paren - 1),
            out);
        // Newer builds say "…), built with GNU 13.3.0 for Linux aarch64" on the same line.
        if (close != std::string_view::npos) {
          const std::size_t with = rest.find("built with ", close);
          if (with != std::string_view::npos) {
            out.built_with = std::string(trim(rest.substr(with + 11)));
          }
        }
      }
    } else if (out.built_with.empty() && starts_with(line, "built with ")) {
      out.built_with = std::string(trim(line.substr(11)));
    }
  }
  return out;
}

std::vector<LlamaServerBinary> find_llama_servers(const platform::Environment& env,
                                                  const std::optional<std::string>& explicit_path) {
  std::vector<LlamaServerBinary> found;
  std::vector<fs::path> seen;
  auto add = [&](const fs::path& path, std::string_view source) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(path, ec);
    const fs::path key = ec ? path : canonical;
    for (const fs::path& other : seen) {
      if (other == key) {
        return;
      }
    }
    seen.push_back(key);
    LlamaServerBinary binary;
    binary.path = path.string();
    binary.source = std::string(source);
    found.push_back(std::move(binary));
  };

  if (explicit_path) {
    const fs::path path(*explicit_path);
    if (platform::is_executable_file(path)) {
      add(path, "--llama-server");
    } else {
      LlamaServerBinary missing;
      missing.path = *explicit_path;
      missing.source = "--llama-server";
      missing.error = fmt::format(
          "{} is not an executable file; pass the path of the "
          "llama-server binary (e.g. ~/llama.cpp/build/bin/llama-server)",
          *explicit_path);
      found.push_back(std::move(missing));
    }
  }
  if (const auto path_var = env.get("PATH")) {
    for (std::string_view dir : split(*path_var, ':')) {
      if (dir.empty()) {
        continue;  // an empty entry means the current directory; not searched on purpose
      }
      const fs::path candidate = fs::path(dir) / kBinaryName;
      if (platform::is_executable_file(candidate)) {
        add(candidate, "PATH");
      }
    }
  }
  std::vector<fs::path> build_dirs;
  if (const auto home = env.get("HOME"); home && !home->empty()) {
    for (std::string_view dir : kHomeBuildDirs) {
      build_dirs.push_back(fs::path(*home) / dir);
    }
  }
  for (std::string_view dir : kSystemBuildDirs) {
    build_dirs.emplace_back(dir);
  }
  for (const fs::path& dir : build_dirs) {
    if (platform::is_executable_file(dir / kBinaryName)) {
      add(dir / kBinaryName, "build folder");
    }
  }
  return found;
}

void query_versions(std::vector<LlamaServerBinary>& binaries) {
  for (LlamaServerBinary& binary : binaries) {
    if (!binary.error.empty()) {
      continue;
    }
    const auto verdict = trust::check_binary(binary.path);
    if (!verdict || !verdict->may_run) {
      binary.error = verdict ? fmt::format("not run: {}; {}", verdict->problem, verdict->fix)
                             : verdict.error().message;
      continue;
    }
    const auto run = platform::run_capture({verdict->path, "--version"}, std::chrono::seconds(10));
    if (!run) {
      binary.error = run.error().message;
      continue;
    }
    binary.version = parse_llama_version(run->output);
    if (run->timed_out) {
      binary.error = "--version did not finish within 10 s";
    } else if (run->exit_status != 0) {
      const std::string_view tail = trim(run->output);
      binary.error = fmt::format("--version failed ({}): {}",
                                 run->signal != 0 ? fmt::format("signal {}", run->signal)
                                                  : fmt::format("exit {}", run->exit_status),
                                 tail.size() > 300 ? tail.substr(tail.size() - 300) : tail);
    } else {
      binary.runs = true;
    }
  }
}

}  // namespace gb10tune::probe

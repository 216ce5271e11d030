#include "gb10tune/server/system_info.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "gb10tune/platform/file_facts.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::server {

namespace {

constexpr std::string_view kSystemInfo = "system_info:";

// The start of the line that holds position `at`.
std::size_t line_start(std::string_view text, std::size_t at) {
  const std::size_t newline = text.rfind('\n', at);
  return newline == std::string_view::npos ? 0 : newline + 1;
}

}  // namespace

std::string_view last_run_of_log(std::string_view log_text) {
  std::size_t at = log_text.rfind(kRunStartMarker);
  if (at == std::string_view::npos) {
    at = log_text.rfind(kSystemInfo);  // older builds print it at every start
  }
  return at == std::string_view::npos ? log_text : log_text.substr(line_start(log_text, at));
}

std::optional<std::string_view> find_system_info_line(std::string_view text) {
  const std::size_t at = text.rfind(kSystemInfo);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view rest = text.substr(at);
  return trim(rest.substr(0, rest.find('\n')));
}

Expected<std::string> read_build_system_info(const std::string& server_path,
                                             std::chrono::milliseconds timeout) {
  namespace fs = std::filesystem;
  const auto program = trust::runnable_binary(server_path);
  if (!program) {
    return program.error();
  }
  const auto made = platform::make_temp_dir("gb10tune-sysinfo-");
  if (!made) {
    return Error{fmt::format("cannot create a private temporary directory to run {}", server_path)};
  }
  const fs::path dir = *made;
  const auto run =
      platform::run_capture({*program, "-lv", "4", "-m", (dir / "no-model.gguf").string(), "--host",
                             (dir / "probe.sock").string()},
                            timeout, 1 << 20);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!run) {
    return Error{fmt::format("cannot run {}: {}", server_path, run.error().message)};
  }
  if (const auto line = find_system_info_line(run->output)) {
    return std::string(*line);
  }
  return Error{fmt::format(
      "{} -lv 4 printed no system_info line ({}; last output: {})", server_path,
      run->timed_out ? std::string("it did not finish")
                     : fmt::format("exit status {}", run->exit_status),
      trim(run->output.substr(run->output.size() > 300 ? run->output.size() - 300 : 0)))};
}

}  // namespace gb10tune::server

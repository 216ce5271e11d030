#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

constexpr std::string_view kUnifiedMemory = "GGML_CUDA_ENABLE_UNIFIED_MEMORY";

}  // namespace

std::vector<Finding> check_environment(const ProcessSnapshot& snapshot) {
  std::vector<Finding> findings;
  Finding unified;
  unified.id = "unified-memory-env";
  unified.fact = "K2";
  unified.summary = fmt::format("{} not in the server's environment", kUnifiedMemory);
  const int pid = snapshot.process.stat.pid;
  if (!snapshot.env) {
    unified.severity = Severity::fail;
    const bool denied =
        snapshot.env_error && snapshot.env_error->failure == sys::ProcFailure::permission_denied;
    unified.evidence = snapshot.env_error ? snapshot.env_error->message
                                          : fmt::format("/proc/{}/environ was not read", pid);
    unified.fix = denied ? "run 'sudo gb10tune verify': only root or the server's own user may "
                           "read its environment, and an unread environment is never a pass"
                         : "run gb10tune verify again once the server is up";
    findings.push_back(std::move(unified));
    return findings;
  }
  const platform::Environment& env = *snapshot.env;
  if (const auto value = env.get(std::string(kUnifiedMemory))) {
    unified.severity = Severity::fail;
    unified.evidence = fmt::format(
        "{}={} in /proc/{}/environ: llama.cpp tests only that the variable exists, so any "
        "value (=0 included) puts every CUDA buffer in managed memory (-16% decode on GB10)",
        kUnifiedMemory, *value, pid);
    unified.fix = fmt::format(
        "remove {} from the server's environment (unset it in the unit file or start "
        "script; gb10tune launch removes it) and restart the server",
        kUnifiedMemory);
  } else {
    unified.evidence =
        fmt::format("absent from /proc/{}/environ ({} variables)", pid, env.vars().size());
  }
  findings.push_back(std::move(unified));

  std::vector<std::string> others;
  for (const auto& [name, value] : env.vars()) {
    if (starts_with(name, "GGML_CUDA_") && name != kUnifiedMemory) {
      others.push_back(name + "=" + value);
    }
  }
  if (!others.empty()) {
    Finding listed;
    listed.id = "ggml-cuda-env";
    listed.fact = "K2";
    listed.summary = "other GGML_CUDA_* variables";
    listed.evidence = fmt::format("{}", fmt::join(others, " "));
    findings.push_back(std::move(listed));
  }
  return findings;
}

}  // namespace gb10tune::verify

#include "gb10tune/trust/binary_trust.hpp"

#include "gb10tune/platform/file_facts.hpp"

namespace gb10tune::trust {

Expected<BinaryVerdict> check_binary(const std::string& path) {
  const auto chain = platform::inspect_executable(path);
  if (!chain) {
    return chain.error();
  }
  return judge_binary(*chain, current_caller());
}

Error refusal(const BinaryVerdict& verdict) {
  return Error{verdict.message(current_caller()), ExitCode::usage};
}

Expected<std::string> runnable_binary(const std::string& path) {
  const auto verdict = check_binary(path);
  if (!verdict) {
    return verdict.error();
  }
  if (!verdict->may_run) {
    return refusal(*verdict);
  }
  return verdict->path;
}

}  // namespace gb10tune::trust

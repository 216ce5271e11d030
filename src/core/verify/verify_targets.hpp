// Which llama-server processes verify checks, and the first check of each: is it one.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/verify/verify.hpp"

namespace gb10tune::verify {

// A process to check, how it was found, and the launch record that started it (or null).
struct Target {
  sys::ServerCandidate process;
  std::string found_by;
  const launch::LaunchRecord* record = nullptr;
};

// Which processes to check; notes about the search (stale records, skipped processes) and why
// there is no server go into `result`.
std::vector<Target> select_targets(const VerifyOptions& options, const VerifyServices& services,
                                   VerifyResult& result);

// The checks of the process group; false when the process cannot be checked further.
bool check_process(const sys::ServerCandidate& process, const launch::LaunchRecord* record,
                   std::vector<Finding>& findings);

}  // namespace gb10tune::verify

// The services verify runs with on this machine (or a captured one): the launch record and pid
// file of the state directory, NVML, the server's log, its --help and system_info (run only
// when trust::check_binary allows, or read from files given instead), the HTTP probe and the
// RPC workers. run_verify decides; these only fetch.
#pragma once

#include <functional>
#include <string>

#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/verify/verify.hpp"

namespace gb10tune::verify {

// Where the services look.
struct SystemServicesInputs {
  platform::Environment env;                     // the state directory's variables
  const platform::Sysroot* root = nullptr;       // required; a captured one runs nothing
  gpu::GpuBackend* gpu = nullptr;                // required
  std::string url;                               // --url: probed even on a captured machine
  std::string server_help_file;                  // instead of running the binary with --help
  std::string server_system_info_file;           // instead of running it with -lv 4
  std::function<void(const std::string&)> warn;  // says what it passed over; may be empty
};

// The services for `inputs`. An Error (the state directory's or a file's in it, as
// trust::check_state_dir gives it; a --server-help file that cannot be read: ExitCode::usage)
// when verify cannot go on.
Expected<VerifyServices> system_services(const SystemServicesInputs& inputs);

}  // namespace gb10tune::verify

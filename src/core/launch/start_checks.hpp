// Internal to the launch module: the steps that a detached start (start_server) and a start in
// the foreground (exec_server) share, so that both refuse and record alike.
#pragma once

#include <string>
#include <vector>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/launch/start_failure.hpp"

namespace gb10tune::launch::detail {

// The log's header line for a start of `argv`: "==== gb10tune VERSION launch at DATE: ARGV\n".
std::string start_header(const std::vector<std::string>& argv);

// The Error of a failed start (see start_server): the classification, `how`, the advice, the
// `evidence` and the last lines of `log_text`, read from `log_path`.
Error failure_error(StartFailure failure, const std::string& how, const std::string& evidence,
                    const std::string& log_text, const std::filesystem::path& log_path);

// What start_server checks before it starts anything: argv[0] absolute, the binary allowed to
// run (trust::check_binary), the state directory private, the port not answering yet. The argv
// to execute (argv[0] the binary's real path); the Errors start_server documents for them.
Expected<std::vector<std::string>> checked_start(const StartRequest& request);

// Writes the pid file and `record` completed for process `pid` (its stat start time, the
// `executable` it runs, "" = keep the record's or argv[0]; empty argv, url, launched_at and
// gb10tune_version filled in; log_path written as given). The Error of the file that could not be
// written; the caller cleans up.
Status save_started(const StartRequest& request, int pid, const std::string& executable,
                    LaunchRecord& record);

}  // namespace gb10tune::launch::detail

// What `bench server` finds before and after its requests, on this machine: the launch record,
// the roofline's inputs, what the
// server is (its provenance) and where a result is saved. The runner (server_run.hpp) sends
// the requests; the CLI only binds options and prints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/roofline.hpp"
#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/bench/workload.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"

namespace gb10tune::bench {

// Receives a warning line (what was passed over and why).
using WarnFn = std::function<void(const std::string&)>;

// The launch record of the state directory of `env`, when launch left one; nullopt (never an
// error) otherwise. A state directory that may not be believed is said to `warn`.
std::optional<launch::LaunchRecord> find_launch_record(const platform::Environment& env,
                                                       const WarnFn& warn);

// The argv of the one local llama-server whose --host/--port (or LLAMA_ARG_HOST/PORT) give
// `url`: a server started by hand, whose flags say how it drafts. nullopt when none or
// several match.
std::optional<std::vector<std::string>> local_server_argv(const platform::Sysroot& root,
                                                          const std::string& url);

// Where the roofline's two inputs come from.
struct RooflineSources {
  std::string model_file;     // --model: the served GGUF; "" = the record or the server's
  double bandwidth_gbps = 0;  // --bandwidth; 0 = the saved probe result
  platform::Environment env;  // the state directory (probe.json)
};

// The device read bandwidth (bytes/s) of the probe saved in the state directory of `env`;
// nullopt when there is none (no probe saved, or it ran no bandwidth bench).
std::optional<double> saved_probe_bandwidth(const platform::Environment& env);

// Bytes read per token: --model, else the launch record (same model), else the model file the
// server reports when it is readable here; the bandwidth: --bandwidth, else the saved probe's
// device read. A usage Error when --model cannot be read; unknown inputs stay 0.
Expected<RooflineInputs> roofline_inputs(const RooflineSources& sources,
                                         const std::optional<launch::LaunchRecord>& record,
                                         const ServerInfo& info);

// The roofline of the headline level: its median decode rate against the ceiling, with drafting
// scaled by its median mean accepted length.
Roofline roofline_of(const RooflineInputs& inputs, const LevelResult& headline);

// What the server at `url` is: /props (model, build, slots), its settings (from /props, and the
// launch record's argv when the record is for `url`), how it drafts and its RPC workers (from
// /slots and the record's argv, else the command line of a server started by hand found under
// `root`: local_server_argv). `date` and the tool version are the caller's.
Provenance describe_server(const ServerInfo& info, const std::string& url,
                           const std::optional<launch::LaunchRecord>& record,
                           const platform::Sysroot& root, const std::string& date);

// Refuses to replace a saved result: a usage Error naming the file when NAME is taken (unless
// `force`). A state directory that cannot be found is left for save_result to report.
Status check_save_target(const std::string& name, const platform::Environment& env, bool force);

// Writes `doc` as the saved result NAME in the private state directory (made if needed,
// written atomically); its path. The Errors of the state directory (ExitCode::failed), of the
// name and of the write.
Expected<std::filesystem::path> save_result(const nlohmann::json& doc, const std::string& name,
                                            const platform::Environment& env);

}  // namespace gb10tune::bench

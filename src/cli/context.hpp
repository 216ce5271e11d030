// What a subcommand may touch of the outside world. main() fills it from the real process;
// tests fill it with fixture sysroots, fake GPUs and string streams.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include "gb10tune/bench/bandwidth_bench.hpp"
#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/gpu/gpu_backend.hpp"
#include "gb10tune/platform/environment.hpp"
#include "gb10tune/platform/sysroot.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/util/exit_code.hpp"

namespace gb10tune::cli {

struct Context {
  platform::Environment env;
  std::ostream* out = nullptr;  // results: text or one JSON document
  std::ostream* err = nullptr;  // errors, warnings, progress
  bool out_is_tty = false;
  bool err_is_tty = false;
  std::size_t err_columns = 0;  // the width of the terminal on stderr; 0 when unknown
  gpu::GpuBackend* gpu = nullptr;
  std::string uname_machine;  // "aarch64"; the fallback when a sysroot does not say
  std::function<std::string()> now_iso8601;
  bench::CaseRunner bandwidth_runner;  // kernels::run_case, or a fake in tests
  // How `bench server` reaches a llama-server: bench::connect_http, or a fake in tests.
  bench::ServerConnector connect_server;
  std::function<double()> clock_seconds;  // a monotonic clock (client-timed figures)

  // Set by the global --sysroot option before a subcommand runs.
  platform::Sysroot sysroot;
  // Set from the command line before a subcommand runs: its words ("bench server"), and
  // whether --json asks for a document on stdout (failures too).
  std::string command;
  bool json = false;

  render::TextStyle out_style() const { return render::TextStyle::for_stream(out_is_tty, env); }
  // Whether progress on stderr may redraw its line in place: a terminal whose TERM is set and
  // not "dumb" (as ninja decides).
  bool err_redraws() const {
    const auto term = env.get("TERM");
    return err_is_tty && term && !term->empty() && *term != "dumb";
  }
};

// A parsed subcommand, ready to run.
using Runner = std::function<ExitCode(Context&)>;

}  // namespace gb10tune::cli

#include <chrono>
#include <ctime>
#include <iostream>

#include "app.hpp"
#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/kernels/bandwidth.hpp"
#include "gb10tune/platform/machine.hpp"
#include "gb10tune/platform/terminal.hpp"

namespace gb10tune::cli {

int main_entry(int argc, char** argv) {
  Context ctx;
  ctx.env = platform::Environment::current();
  auto backend = gpu::make_system_backend(platform::nvml_library(ctx.env));
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.out_is_tty = platform::is_terminal(platform::kStdoutFd);
  ctx.err_is_tty = platform::is_terminal(platform::kStderrFd);
  ctx.err_columns = platform::terminal_columns(platform::kStderrFd);
  ctx.gpu = backend.get();
  ctx.bandwidth_runner = kernels::run_case;
  ctx.connect_server = bench::connect_http;
  ctx.clock_seconds = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  ctx.uname_machine = platform::machine_name();
  ctx.now_iso8601 = [] {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text);
  };
  return run_cli(argc, argv, ctx);
}

}  // namespace gb10tune::cli

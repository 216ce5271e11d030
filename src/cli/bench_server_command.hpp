// `gb10tune bench server`: the decode, prefill and speculation figures of a running
// llama-server on a realistic multi-turn workload (K4, K5, K10, K12).
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds `server` under the `bench` command `bench`; the returned Runner runs it.
Runner setup_bench_server(CLI::App& bench);

}  // namespace gb10tune::cli

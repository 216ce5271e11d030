// `gb10tune bench compare A B`: two saved server benchmarks side by side (K7).
#pragma once

#include <CLI/CLI.hpp>

#include "context.hpp"

namespace gb10tune::cli {

// Adds `compare` under the `bench` command `bench`; the returned Runner runs it.
Runner setup_bench_compare(CLI::App& bench);

}  // namespace gb10tune::cli

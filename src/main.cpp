// gb10tune: the process entry point. Everything else lives in the CLI and core libraries.
#include "cli/app.hpp"

int main(int argc, char** argv) {
  return gb10tune::cli::main_entry(argc, argv);
}

// Whether llama-server could bind its HTTP port now: the same bind it will make, tried first.
#pragma once

#include <string>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// What a trial bind of HOST:PORT found.
enum class PortState {
  free,   // a socket bound it (and was closed at once)
  taken,  // every address of HOST answered EADDRINUSE: something holds the port
};

// Binds a TCP socket to each address of `host` (a name or a literal, resolved as llama-server's
// HTTP library does: getaddrinfo, AI_PASSIVE) and `port` with SO_REUSEADDR, as llama-server
// does, and closes it. `free` when one bind succeeds, `taken` when they all fail with
// EADDRINUSE. An Error naming HOST:PORT for a name that does not resolve or another bind
// failure (EACCES for a port below 1024, an address not on this machine).
Expected<PortState> probe_port(const std::string& host, int port);

}  // namespace gb10tune::platform

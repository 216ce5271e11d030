// The ServerProbe that talks HTTP to a real llama-server.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "gb10tune/verify/server_probe.hpp"

namespace gb10tune::verify {

// A probe of the server at `base_url` ("http://127.0.0.1:8080"). GET requests time out after
// `timeout`, the smoke completion after `smoke_timeout`. A URL that does not parse makes
// every call answer "no answer" with the parser's message.
std::unique_ptr<ServerProbe> make_http_probe(
    const std::string& base_url, std::chrono::milliseconds timeout = std::chrono::seconds(2),
    std::chrono::milliseconds smoke_timeout = std::chrono::seconds(120));

}  // namespace gb10tune::verify

// Loopback web servers for the remote header reads (gb10tune plan URL), as HostilePeer scripts:
// one that serves files and honours Range, one that ignores it, one that drips its answer, one
// that redirects. Each counts what it sent, so a test can check the bytes a read cost.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/hostile_peer.hpp"

namespace gb10tune::testing {

// What the peer saw and sent, shared with the test.
struct PeerLog {
  std::atomic<std::uint64_t> body_bytes{0};  // body bytes sent, all answers together
  std::atomic<int> requests{0};
  std::mutex mutex;
  std::vector<std::string> request_lines;  // "GET /m.gguf HTTP/1.1", in order

  std::vector<std::string> lines();
};

// The path of a request's target ("/m.gguf"), an absolute-form target (through a proxy) cut to
// its path; and the first and last byte of its Range header (nullopt without one).
struct PeerRequest {
  std::string path;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> range;
};
PeerRequest parse_peer_request(const std::string& request);

// Serves `files` (URL path → file on disk): 206 with Content-Range and an ETag for a Range
// request, 200 with the whole file without one, 404 for any other path.
PeerScript ranged_files(std::map<std::string, std::filesystem::path> files,
                        std::shared_ptr<PeerLog> log);

// Serves `files` as `python3 -m http.server` does: 200 with the whole file and its
// Content-Length whatever the Range header asks, 404 for any other path.
PeerScript whole_files(std::map<std::string, std::filesystem::path> files,
                       std::shared_ptr<PeerLog> log);

// Answers every request 200 with Content-Length `size` and sends zeros until the client goes.
PeerScript ignores_ranges(std::uint64_t size, std::shared_ptr<PeerLog> log);

// Answers 206 for a file of `size` bytes, then drips its body one byte every `pause`.
PeerScript drips_ranges(std::uint64_t size, std::chrono::milliseconds pause,
                        std::shared_ptr<PeerLog> log);

// Redirects (302) each path of `moves` to its Location; 404 for any other path.
PeerScript redirects(std::map<std::string, std::string> moves, std::shared_ptr<PeerLog> log);

}  // namespace gb10tune::testing

#include "support/range_peer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace gb10tune::testing {

namespace {

void record(PeerLog& log, const std::string& request) {
  ++log.requests;
  std::lock_guard lock(log.mutex);
  log.request_lines.push_back(request.substr(0, request.find("\r\n")));
}

std::string read_range(const std::filesystem::path& file, std::uint64_t first,
                       std::uint64_t count) {
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(first));
  std::string bytes(count, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

std::vector<std::string> PeerLog::lines() {
  std::lock_guard lock(mutex);
  return request_lines;
}

PeerRequest parse_peer_request(const std::string& request) {
  PeerRequest out;
  const auto first_space = request.find(' ');
  const auto second_space = request.find(' ', first_space + 1);
  std::string target = request.substr(first_space + 1, second_space - first_space - 1);
  if (const auto scheme = target.find("://"); scheme != std::string::npos) {
    target = target.substr(target.find('/', scheme + 3));
  }
  out.path = target;
  const auto at = request.find("\r\nRange: bytes=");
  if (at != std::string::npos) {
    const auto start = at + 15;
    const auto dash = request.find('-', start);
    const auto end = request.find("\r\n", dash);
    out.range = std::pair{std::stoull(request.substr(start, dash - start)),
                          std::stoull(request.substr(dash + 1, end - dash - 1))};
  }
  return out;
}

PeerScript ranged_files(std::map<std::string, std::filesystem::path> files,
                        std::shared_ptr<PeerLog> log) {
  return [files = std::move(files), log](PeerConnection& c) {
    record(*log, c.request());
    const PeerRequest r = parse_peer_request(c.request());
    const auto it = files.find(r.path);
    if (it == files.end()) {
      c.send("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found");
      return;
    }
    const std::uint64_t size = std::filesystem::file_size(it->second);
    const std::uint64_t first = r.range ? r.range->first : 0;
    const std::uint64_t last = r.range ? std::min(r.range->second, size - 1) : size - 1;
    const std::string body = read_range(it->second, first, last - first + 1);
    const std::string head =
        r.range ? fmt::format("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {}-{}/{}\r\n",
                              first, last, size)
                : std::string("HTTP/1.1 200 OK\r\n");
    log->body_bytes += body.size();
    c.send(head +
           fmt::format("ETag: \"v1\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                       body.size()) +
           body);
  };
}

PeerScript whole_files(std::map<std::string, std::filesystem::path> files,
                       std::shared_ptr<PeerLog> log) {
  return [files = std::move(files), log](PeerConnection& c) {
    record(*log, c.request());
    const auto it = files.find(parse_peer_request(c.request()).path);
    if (it == files.end()) {
      c.send("HTTP/1.0 404 File not found\r\nContent-Length: 9\r\n\r\nnot found");
      return;
    }
    const std::uint64_t size = std::filesystem::file_size(it->second);
    const std::string body = read_range(it->second, 0, size);
    log->body_bytes += body.size();
    c.send(fmt::format("HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.12.3\r\n"
                       "Content-type: application/octet-stream\r\nContent-Length: {}\r\n"
                       "Last-Modified: Mon, 07 Dec 2026 01:00:00 GMT\r\n\r\n",
                       size) +
           body);
  };
}

PeerScript ignores_ranges(std::uint64_t size, std::shared_ptr<PeerLog> log) {
  return [size, log](PeerConnection& c) {
    record(*log, c.request());
    c.send(fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", size));
    const std::string zeros(64 * 1024, '\0');
    for (std::uint64_t sent = 0; sent < size; sent += zeros.size()) {
      if (!c.send(zeros)) {
        return;
      }
      log->body_bytes += zeros.size();
    }
  };
}

PeerScript drips_ranges(std::uint64_t size, std::chrono::milliseconds pause,
                        std::shared_ptr<PeerLog> log) {
  return [size, pause, log](PeerConnection& c) {
    record(*log, c.request());
    const PeerRequest r = parse_peer_request(c.request());
    const std::uint64_t first = r.range ? r.range->first : 0;
    const std::uint64_t last = r.range ? std::min(r.range->second, size - 1) : size - 1;
    c.send(
        fmt::format("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {}-{}/{}\r\n"
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    first, last, size, last - first + 1));
    c.drip("GGUF", pause);
    log->body_bytes += 4;
    c.wait_for_close();
  };
}

PeerScript redirects(std::map<std::string, std::string> moves, std::shared_ptr<PeerLog> log) {
  return [moves = std::move(moves), log](PeerConnection& c) {
    record(*log, c.request());
    const auto it = moves.find(parse_peer_request(c.request()).path);
    if (it == moves.end()) {
      c.send("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    c.send(
        fmt::format("HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\n"
                    "Connection: close\r\n\r\n",
                    it->second));
  };
}

}  // namespace gb10tune::testing

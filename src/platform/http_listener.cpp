#include "gb10tune/platform/http_listener.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "gb10tune/util/host_port.hpp"

namespace gb10tune::platform {

namespace {

constexpr int kPollMs = 200;  // how often the serving thread looks at m_stop
constexpr auto kClientDeadline = std::chrono::seconds(2);  // a whole request, read and answered
constexpr std::size_t kMaxRequest = 8192;                  // the request line and headers
constexpr std::size_t kMaxBody = 64 * 1024;

// Appends what arrives next to `text` before `deadline`; false when the client stalls or closes.
bool receive_more(int fd, std::string& text, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd p{fd, POLLIN, 0};
  if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
    return false;
  }
  char buffer[4096];
  const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
  if (n <= 0) {
    return false;
  }
  text.append(buffer, static_cast<std::size_t>(n));
  return true;
}

// The Content-Length of a request head; 0 when there is none.
std::size_t content_length(std::string_view head) {
  std::string lower(head);
  for (char& c : lower) {
    c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  }
  const std::size_t at = lower.find("\ncontent-length:");
  return at == std::string::npos ? 0 : std::strtoull(lower.c_str() + at + 16, nullptr, 10);
}

// The request (method, path, body), read within the deadline and the size bounds; nullopt when
// the client stalls, floods, closes first or does not speak HTTP.
std::optional<HttpRequest> read_request(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + kClientDeadline;
  std::string text;
  std::size_t head_end = std::string::npos;
  while ((head_end = text.find("\r\n\r\n")) == std::string::npos) {
    if (text.size() >= kMaxRequest || !receive_more(fd, text, deadline)) {
      return std::nullopt;
    }
  }
  const std::string_view head = std::string_view(text).substr(0, head_end);
  const std::size_t length = content_length(head);
  const std::size_t method_end = head.find(' ');
  if (length > kMaxBody || method_end == std::string_view::npos) {
    return std::nullopt;
  }
  while (text.size() < head_end + 4 + length) {
    if (!receive_more(fd, text, deadline)) {
      return std::nullopt;
    }
  }
  const std::size_t path_end = head.find_first_of(" ?\r", method_end + 1);
  return HttpRequest{std::string(head.substr(0, method_end)),
                     std::string(head.substr(method_end + 1, path_end - method_end - 1)),
                     text.substr(head_end + 4, length)};
}

void send_answer(int fd, const HttpAnswer& answer) {
  const std::string reason = answer.status == 200   ? "OK"
                             : answer.status == 405 ? "Method Not Allowed"
                                                    : "Not Found";
  const std::string bytes = fmt::format(
      "HTTP/1.0 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      answer.status, reason, answer.content_type, answer.body.size(), answer.body);
  const auto deadline = std::chrono::steady_clock::now() + kClientDeadline;
  std::size_t sent = 0;
  while (sent < bytes.size() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, kPollMs) <= 0) {
      continue;
    }
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      return;
    }
    sent += static_cast<std::size_t>(n);
  }
}

Expected<Fd> bind_socket(const std::string& address, int port) {
  const std::string where = format_host_port(address, port);
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    family = AF_INET6;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    return Error{fmt::format("cannot listen on {}: '{}' is not a numeric IPv4 or IPv6 address "
                             "(use 127.0.0.1, 0.0.0.0 or ::1, say)",
                             where, address),
                 ExitCode::usage};
  }
  Fd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int on = 1;
  if (!fd.valid() || ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      ::bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(fd.get(), 16) != 0) {
    return Error{fmt::format("cannot listen on {}: {} (pick a free port, or an address of this "
                             "machine)",
                             where, std::strerror(errno)),
                 ExitCode::usage};
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return 0;
  }
  return storage.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
}

}  // namespace

Expected<std::unique_ptr<HttpListener>> HttpListener::start(const std::string& address, int port,
                                                            Handler handler) {
  auto fd = bind_socket(address, port);
  if (!fd) {
    return fd.error();
  }
  const int bound = bound_port(fd->get());
  return std::unique_ptr<HttpListener>(new HttpListener(std::move(*fd), bound, std::move(handler)));
}

HttpListener::HttpListener(Fd socket, int port, Handler handler)
    : m_socket(std::move(socket)), m_port(port), m_handler(std::move(handler)) {
  m_thread = std::thread([this] { serve(); });
}

HttpListener::~HttpListener() {
  m_stop = true;
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

void HttpListener::serve() {
  while (!m_stop) {
    pollfd p{m_socket.get(), POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) {
      continue;
    }
    Fd client(::accept4(m_socket.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) {
      continue;
    }
    const auto request = read_request(client.get());
    if (request) {
      send_answer(client.get(), m_handler(*request));
    }
  }
}

}  // namespace gb10tune::platform

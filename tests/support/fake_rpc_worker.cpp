// The stand-in RPC worker: a poll()-driven accept loop, one client at a time.
#include "fake_rpc_worker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

namespace gb10tune::testing {

namespace {

bool read_exact(int fd, void* data, std::size_t size, const std::atomic<bool>& stop) {
  auto* bytes = static_cast<std::uint8_t*>(data);
  std::size_t got = 0;
  while (got < size) {
    pollfd entry{fd, POLLIN, 0};
    const int rc = ::poll(&entry, 1, 100);
    if (stop.load()) {
      return false;
    }
    if (rc <= 0) {
      continue;
    }
    const ssize_t n = ::recv(fd, bytes + got, size - got, 0);
    if (n <= 0) {
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      return false;
    }
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

void put_le(std::vector<std::uint8_t>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

std::vector<std::uint8_t> answer(const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out;
  put_le(out, payload.size(), 8);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<std::uint8_t> hello_answer(const rpc::ProtocolVersion& version) {
  std::vector<std::uint8_t> payload{version.major, version.minor, version.patch, 0};
  payload.resize(rpc::kHelloAnswerSize, 0);
  return answer(payload);
}

std::atomic<bool> g_signalled{false};
void on_signal(int) {
  g_signalled.store(true);
}

}  // namespace

FakeRpcWorker::FakeRpcWorker(WorkerConfig config, const std::string& host, int port)
    : m_config(std::move(config)) {
  m_listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(m_listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1 ||
      ::bind(m_listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(m_listen_fd, 8) != 0) {
    ::close(m_listen_fd);
    throw std::runtime_error("stand-in RPC worker: cannot listen on " + host + ":" +
                             std::to_string(port) + ": " + std::strerror(errno));
  }
  socklen_t length = sizeof(address);
  ::getsockname(m_listen_fd, reinterpret_cast<sockaddr*>(&address), &length);
  m_port = ntohs(address.sin_port);
  m_thread = std::thread([this] { serve(); });
}

FakeRpcWorker::~FakeRpcWorker() {
  m_stop.store(true);
  if (m_thread.joinable()) {
    m_thread.join();
  }
  ::close(m_listen_fd);
}

void FakeRpcWorker::serve() {
  while (!m_stop.load() && !g_signalled.load()) {
    pollfd entry{m_listen_fd, POLLIN, 0};
    if (::poll(&entry, 1, 100) <= 0) {
      continue;
    }
    const int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    ++m_connections;
    if (m_config.log_connections) {
      std::printf("Accepted client connection\n");
      std::fflush(stdout);
    }
    serve_client(fd);
    ::close(fd);
    if (m_config.log_connections) {
      std::printf("Client connection closed\n");
      std::fflush(stdout);
    }
  }
}

void FakeRpcWorker::serve_client(int fd) {
  const WorkerBehaviour behaviour = m_config.behaviour;
  if (behaviour == WorkerBehaviour::close_at_connect) {
    return;
  }
  std::uint8_t command = 0;
  std::uint64_t size = 0;
  if (!read_exact(fd, &command, 1, m_stop) || !read_exact(fd, &size, 8, m_stop)) {
    return;
  }
  if (command != static_cast<std::uint8_t>(rpc::Command::hello) || size != rpc::kConnCapsSize) {
    return;  // like rpc-server: the first command must be a hello of the right size
  }
  std::vector<std::uint8_t> caps(rpc::kConnCapsSize);
  if (!read_exact(fd, caps.data(), caps.size(), m_stop)) {
    return;
  }
  switch (behaviour) {
    case WorkerBehaviour::silent: {
      std::uint8_t ignored = 0;
      while (read_exact(fd, &ignored, 1, m_stop)) {
      }
      return;
    }
    case WorkerBehaviour::garbage: {
      std::vector<std::uint8_t> junk{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
      for (int i = 0; i < 64; ++i) {
        junk.push_back(static_cast<std::uint8_t>(i * 37 + 11));
      }
      write_all(fd, junk);
      return;
    }
    case WorkerBehaviour::close_mid_hello: {
      auto full = hello_answer(m_config.version);
      full.resize(full.size() / 2);
      write_all(fd, full);
      return;
    }
    default:
      break;
  }
  if (!write_all(fd, hello_answer(m_config.version))) {
    return;
  }
  while (read_exact(fd, &command, 1, m_stop) && read_exact(fd, &size, 8, m_stop)) {
    std::vector<std::uint8_t> request(static_cast<std::size_t>(size > 64 ? 0 : size));
    if (size > 64 || !read_exact(fd, request.data(), request.size(), m_stop)) {
      return;
    }
    std::vector<std::uint8_t> payload;
    if (command == static_cast<std::uint8_t>(rpc::Command::device_count) && size == 0) {
      put_le(payload, m_config.devices.size(), 4);
    } else if (command == static_cast<std::uint8_t>(rpc::Command::get_device_memory) && size == 4) {
      std::uint32_t device = 0;
      std::memcpy(&device, request.data(), 4);
      if (device >= m_config.devices.size()) {
        return;
      }
      put_le(payload, m_config.devices[device].free_bytes, 8);
      put_le(payload, m_config.devices[device].total_bytes, 8);
    } else {
      return;  // unknown to the stand-in: close, as rpc-server does on a bad request
    }
    if (!write_all(fd, answer(payload))) {
      return;
    }
  }
}

int run_fake_rpc_worker_forever(const WorkerConfig& config, const std::string& host, int port) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  try {
    WorkerConfig logged = config;
    logged.log_connections = true;  // as the real rpc-server does
    FakeRpcWorker worker(logged, host, port);
    std::printf("Starting RPC server v%d.%d.%d\n  endpoint       : %s:%d\n", config.version.major,
                config.version.minor, config.version.patch, host.c_str(), worker.port());
    std::fflush(stdout);
    while (!g_signalled.load()) {
      ::usleep(50 * 1000);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}

}  // namespace gb10tune::testing

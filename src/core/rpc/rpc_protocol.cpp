// Encoding and decoding of the few ggml-rpc messages gb10tune uses; every integer on the wire
// is little-endian (the byte order of every machine llama.cpp's RPC runs on).
#include "gb10tune/rpc/rpc_protocol.hpp"

#include <fmt/format.h>

namespace gb10tune::rpc {

namespace {

void put_le(std::vector<std::uint8_t>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

std::uint64_t get_le(const std::vector<std::uint8_t>& in, std::size_t offset, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<std::uint64_t>(in.at(offset + static_cast<std::size_t>(i))) << (8 * i);
  }
  return value;
}

Error bad_endpoint(std::string_view text, std::string_view why) {
  return Error{fmt::format("bad RPC worker address '{}': {} (expected HOST:PORT, e.g. "
                           "192.168.100.2:50052)",
                           text, why),
               ExitCode::usage};
}

}  // namespace

std::string ProtocolVersion::to_string() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}

std::vector<std::uint8_t> encode_request(Command command,
                                         const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out;
  out.reserve(9 + payload.size());
  out.push_back(static_cast<std::uint8_t>(command));
  put_le(out, payload.size(), 8);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<std::uint8_t> encode_hello() {
  return encode_request(Command::hello, std::vector<std::uint8_t>(kConnCapsSize, 0));
}

std::vector<std::uint8_t> encode_device_count() {
  return encode_request(Command::device_count, {});
}

std::vector<std::uint8_t> encode_device_memory(std::uint32_t device) {
  std::vector<std::uint8_t> payload;
  put_le(payload, device, 4);
  return encode_request(Command::get_device_memory, payload);
}

std::uint64_t decode_size(const std::vector<std::uint8_t>& prefix) {
  return get_le(prefix, 0, 8);
}

ProtocolVersion decode_hello(const std::vector<std::uint8_t>& payload) {
  return ProtocolVersion{payload.at(0), payload.at(1), payload.at(2)};
}

std::uint32_t decode_device_count(const std::vector<std::uint8_t>& payload) {
  return static_cast<std::uint32_t>(get_le(payload, 0, 4));
}

DeviceMemory decode_device_memory(const std::vector<std::uint8_t>& payload) {
  return DeviceMemory{get_le(payload, 0, 8), get_le(payload, 8, 8)};
}

bool compatible(const ProtocolVersion& worker, const ProtocolVersion& head) {
  return worker.major == head.major && worker.minor <= head.minor;
}

Expected<Endpoint> parse_endpoint(std::string_view text) {
  auto endpoint = parse_host_port(text);
  if (!endpoint) {
    return bad_endpoint(text, endpoint.error().message);
  }
  return endpoint;
}

Expected<std::vector<Endpoint>> parse_endpoint_list(std::string_view text) {
  std::vector<Endpoint> endpoints;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      comma = text.size();
    }
    const auto item = text.substr(start, comma - start);
    auto endpoint = parse_endpoint(item);
    if (!endpoint) {
      return endpoint.error();
    }
    for (const auto& seen : endpoints) {
      if (seen == *endpoint) {
        return bad_endpoint(item, "listed twice");
      }
    }
    endpoints.push_back(*endpoint);
    start = comma + 1;
  }
  return endpoints;
}

}  // namespace gb10tune::rpc

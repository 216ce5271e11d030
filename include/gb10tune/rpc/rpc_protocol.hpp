// The part of llama.cpp's RPC protocol (ggml-rpc, `rpc-server`) that gb10tune speaks: the
// hello with its protocol version, the device count and each device's memory. Pure encoding
// and decoding; the wire itself is in rpc_client.
//
// Framing (ggml-rpc.cpp): a request is | command (1 byte) | size (u64 LE) | payload |, an
// answer is | size (u64 LE) | payload |. The first command of a connection must be HELLO.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"
#include "gb10tune/util/host_port.hpp"

namespace gb10tune::rpc {

// An RPC protocol version (RPC_PROTO_{MAJOR,MINOR,PATCH}_VERSION of ggml-rpc.h).
struct ProtocolVersion {
  std::uint8_t major = 0;
  std::uint8_t minor = 0;
  std::uint8_t patch = 0;
  // "5.1.0".
  std::string to_string() const;
  friend bool operator==(const ProtocolVersion&, const ProtocolVersion&) = default;
};

// The version llama.cpp 3f545be (2026-08) speaks, which this gb10tune was checked against.
inline constexpr ProtocolVersion kKnownVersion{5, 1, 0};

// The commands gb10tune sends (their numbers are fixed by the rpc_cmd enum of ggml-rpc.cpp).
enum class Command : std::uint8_t {
  get_device_memory = 11,
  hello = 14,  // always 14, in every protocol version
  device_count = 15,
};

// Bytes of transport capabilities in the hello request and answer (zero: plain TCP).
inline constexpr std::size_t kConnCapsSize = 24;
// Bytes of the hello answer: major, minor, patch, padding, capabilities.
inline constexpr std::size_t kHelloAnswerSize = 4 + kConnCapsSize;

// One device of a worker as the worker reports it.
struct DeviceMemory {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

// A request frame: command, payload size (u64 little-endian), payload.
std::vector<std::uint8_t> encode_request(Command command, const std::vector<std::uint8_t>& payload);
// HELLO with all-zero capabilities (no RDMA upgrade: the connection stays plain TCP).
std::vector<std::uint8_t> encode_hello();
// DEVICE_COUNT (empty payload).
std::vector<std::uint8_t> encode_device_count();
// GET_DEVICE_MEMORY for device `device`.
std::vector<std::uint8_t> encode_device_memory(std::uint32_t device);

// Reads the u64 little-endian size prefix of an answer (exactly 8 bytes).
std::uint64_t decode_size(const std::vector<std::uint8_t>& prefix);
// The version in a hello answer payload (kHelloAnswerSize bytes).
ProtocolVersion decode_hello(const std::vector<std::uint8_t>& payload);
// The count in a DEVICE_COUNT answer payload (4 bytes).
std::uint32_t decode_device_count(const std::vector<std::uint8_t>& payload);
// The figures in a GET_DEVICE_MEMORY answer payload (16 bytes).
DeviceMemory decode_device_memory(const std::vector<std::uint8_t>& payload);

// llama.cpp's own rule, applied by the head when it connects: the same major version and a
// worker minor version no newer than the head's.
bool compatible(const ProtocolVersion& worker, const ProtocolVersion& head);

// Where a worker listens ("[::1]:50052" for IPv6 in to_string(), the form llama-server's --rpc
// takes).
using Endpoint = HostPort;

// Parses "HOST:PORT" or "[V6]:PORT". An Error (usage) naming the text otherwise.
Expected<Endpoint> parse_endpoint(std::string_view text);
// Parses a comma-separated list (the --rpc value); an Error for an empty list, a bad entry
// or the same endpoint twice.
Expected<std::vector<Endpoint>> parse_endpoint_list(std::string_view text);

}  // namespace gb10tune::rpc

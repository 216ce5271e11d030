// One host:port type for every address gb10tune binds, asks or prints: the RPC worker's bind,
// the head's --rpc list, launch's and verify's server address and the network clients' peers.
// "Every interface" and "this machine" are decided here, from the address as the program that
// reads it parses it, never by comparing strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gb10tune/util/expected.hpp"

namespace gb10tune {

// A host and a port.
struct HostPort {
  std::string host;  // a name or an address; IPv6 without brackets ("::1")
  int port = 0;
  // "host:port", IPv6 addresses in brackets ("[::1]:50052"): the form URLs and llama-server's
  // --rpc take.
  std::string to_string() const;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

// "host:port" for `host` and `port`, in brackets when the host is an IPv6 address.
std::string format_host_port(std::string_view host, int port);
// The same with the port as written (a command line's text, checked elsewhere or not at all).
std::string format_host_port(std::string_view host, std::string_view port);

// Parses "HOST:PORT" or "[V6]:PORT"; with a `default_port`, also "HOST" and "[V6]" alone. The
// port must be 1-65535. An Error (usage) saying in a few words what is wrong (callers name the
// text and the form they expect): no host, no port, an IPv6 address without brackets, a bad
// port.
Expected<HostPort> parse_host_port(std::string_view text,
                                   std::optional<int> default_port = std::nullopt);

// `host` without the brackets of "[V6]" (an address option may be written either way).
std::string_view bare_host(std::string_view host);

// The program that reads an address: the same text means different things to each.
enum class AddressReader {
  // rpc-server's -H: inet_addr(), the classic BSD forms of IPv4 only ("0", "0x0", "127.1",
  // "10.0.0.1 junk" are all addresses); no names, no IPv6, and 255.255.255.255 is its error.
  inet_addr,
  // getaddrinfo(): llama-server's --host (cpp-httplib binds through it) and every client's
  // connect. IPv4 in the same forms but nothing after them, IPv6, and names.
  resolver,
};

// What an address means to its reader.
enum class HostKind {
  any,       // every interface: INADDR_ANY in any spelling, "::", ::ffff:0.0.0.0, an empty host
  loopback,  // this machine only: 127.0.0.0/8, ::1, ::ffff:127.x.y.z, "localhost"
  address,   // another numeric address
  name,      // a name to look up (the resolver only)
  invalid,   // not an address this reader accepts
};

// Classifies `host` (brackets allowed, text after a NUL ignored as C would) the way `reader`
// parses it. Never fails.
HostKind classify_host(std::string_view host, AddressReader reader);

// True when `host` makes a listener of either reader take connections on every interface.
bool binds_every_interface(std::string_view host);

// The host to ask a server bound to `bind_host`: the loopback address of the same family for an
// any-address bind ("127.0.0.1", or "::1" for an IPv6 one), else `bind_host` without brackets.
std::string reachable_host(std::string_view bind_host);

}  // namespace gb10tune

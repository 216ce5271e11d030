// host:port parsing and formatting, and what an address means to the program that reads it.
// The parsing is libc's own (inet_addr, inet_aton, inet_pton): pure functions, no lookups.
#include "gb10tune/util/host_port.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

#include "gb10tune/util/strings.hpp"

namespace gb10tune {

namespace {

Error bad(std::string why) {
  return Error{std::move(why), ExitCode::usage};
}

// The text a C program receives for `host`: up to the first NUL, brackets removed.
std::string c_text(std::string_view host) {
  return std::string(bare_host(host.substr(0, host.find('\0'))));
}

HostKind ipv4_kind(in_addr address) {
  const std::uint32_t value = ntohl(address.s_addr);
  if (value == 0) {
    return HostKind::any;
  }
  return (value >> 24) == 127 ? HostKind::loopback : HostKind::address;
}

// IPv6 as getaddrinfo() reads it (a "%scope" suffix allowed); nullopt when it is not one.
std::optional<in6_addr> ipv6_address(const std::string& text) {
  const std::string address = text.substr(0, text.find('%'));
  in6_addr parsed{};
  if (::inet_pton(AF_INET6, address.c_str(), &parsed) != 1) {
    return std::nullopt;
  }
  return parsed;
}

HostKind ipv6_kind(const in6_addr& address) {
  if (IN6_IS_ADDR_UNSPECIFIED(&address)) {
    return HostKind::any;
  }
  if (IN6_IS_ADDR_LOOPBACK(&address)) {
    return HostKind::loopback;
  }
  if (IN6_IS_ADDR_V4MAPPED(&address)) {
    // A v6 socket bound to ::ffff:a.b.c.d listens as the IPv4 address a.b.c.d does.
    in_addr v4{};
    std::memcpy(&v4.s_addr, &address.s6_addr[12], 4);
    return ipv4_kind(v4);
  }
  return HostKind::address;
}

bool is_localhost(std::string_view name) {
  std::string lower;
  for (const char c : name) {
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return lower == "localhost" || lower == "localhost.";
}

HostKind classify_for_inet_addr(const std::string& text) {
  in_addr address{};
  address.s_addr = ::inet_addr(text.c_str());
  // INADDR_NONE is inet_addr's error, and rpc-server treats it as one even for
  // "255.255.255.255".
  return address.s_addr == INADDR_NONE ? HostKind::invalid : ipv4_kind(address);
}

HostKind classify_for_resolver(const std::string& text) {
  if (text.empty()) {
    return HostKind::any;  // cpp-httplib binds a null node: the passive any-address
  }
  // getaddrinfo() takes inet_aton()'s IPv4 forms with nothing after them.
  in_addr v4{};
  if (text.find_first_of(" \t\n\v\f\r") == std::string::npos && ::inet_aton(text.c_str(), &v4)) {
    return ipv4_kind(v4);
  }
  if (const auto v6 = ipv6_address(text)) {
    return ipv6_kind(*v6);
  }
  return is_localhost(text) ? HostKind::loopback : HostKind::name;
}

}  // namespace

std::string HostPort::to_string() const {
  return format_host_port(host, port);
}

std::string format_host_port(std::string_view host, int port) {
  return format_host_port(host, std::to_string(port));
}

std::string format_host_port(std::string_view host, std::string_view port) {
  return host.find(':') != std::string_view::npos ? fmt::format("[{}]:{}", host, port)
                                                  : fmt::format("{}:{}", host, port);
}

std::string_view bare_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

Expected<HostPort> parse_host_port(std::string_view text, std::optional<int> default_port) {
  HostPort result;
  std::string_view host;
  std::optional<std::string_view> port_text;
  if (starts_with(text, "[")) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      return bad("an IPv6 address needs a closing ']'");
    }
    host = text.substr(1, close - 1);
    const std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return bad("expected ':PORT' after the IPv6 address");
      }
      port_text = after.substr(1);
    }
  } else {
    const auto colon = text.find(':');
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      return bad("an IPv6 address needs brackets, as in [::1]:PORT");
    }
    host = text.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
    }
  }
  if (host.empty()) {
    return bad("no host");
  }
  result.host = std::string(host);
  if (!port_text) {
    if (!default_port) {
      return bad("no port");
    }
    result.port = *default_port;
    return result;
  }
  if (port_text->empty()) {
    return bad("the port is empty");
  }
  const char* end = port_text->data() + port_text->size();
  const auto [stop, ec] = std::from_chars(port_text->data(), end, result.port);
  if (ec != std::errc{} || stop != end || result.port < 1 || result.port > 65535) {
    return bad(fmt::format("'{}' is not a port (1-65535)", *port_text));
  }
  return result;
}

HostKind classify_host(std::string_view host, AddressReader reader) {
  const std::string text = c_text(host);
  return reader == AddressReader::inet_addr ? classify_for_inet_addr(text)
                                            : classify_for_resolver(text);
}

bool binds_every_interface(std::string_view host) {
  return classify_host(host, AddressReader::inet_addr) == HostKind::any ||
         classify_host(host, AddressReader::resolver) == HostKind::any;
}

std::string reachable_host(std::string_view bind_host) {
  const std::string text = c_text(bind_host);
  if (!binds_every_interface(text)) {
    return std::string(bare_host(bind_host));
  }
  const auto v6 = ipv6_address(text);
  return v6 && !IN6_IS_ADDR_V4MAPPED(&*v6) ? "::1" : "127.0.0.1";
}

}  // namespace gb10tune

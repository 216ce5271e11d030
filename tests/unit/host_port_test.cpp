// host:port parsing and formatting, and what an address means to inet_addr() (rpc-server's -H)
// and to getaddrinfo() (llama-server's --host, every client).
#include "gb10tune/util/host_port.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune {
namespace {

TEST(HostPort, ParsesHostPortAndBracketedIpv6) {
  const auto v4 = parse_host_port("192.168.100.2:50052");
  ASSERT_TRUE(v4) << v4.error().message;
  EXPECT_EQ(v4->host, "192.168.100.2");
  EXPECT_EQ(v4->port, 50052);
  const auto v6 = parse_host_port("[fe80::1%eth0]:8080");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->host, "fe80::1%eth0");
  EXPECT_EQ(v6->port, 8080);
  const auto name = parse_host_port("spark2:1");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->host, "spark2");
}

TEST(HostPort, ABareHostTakesTheDefaultPortOnlyWhenThereIsOne) {
  const auto bare = parse_host_port("spark2", 80);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->port, 80);
  const auto v6 = parse_host_port("[::1]", 80);
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 80);
  const auto required = parse_host_port("spark2");
  ASSERT_FALSE(required);
  EXPECT_EQ(required.error().message, "no port");
}

TEST(HostPort, RefusesWhatIsNotHostPort) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "no host"},
      {":80", "no host"},
      {"[]:80", "no host"},
      {"host:", "the port is empty"},
      {"host:0", "'0' is not a port (1-65535)"},
      {"host:65536", "'65536' is not a port (1-65535)"},
      {"host:80x", "'80x' is not a port (1-65535)"},
      {"host:-1", "'-1' is not a port (1-65535)"},
      {"fe80::1:50052", "an IPv6 address needs brackets, as in [::1]:PORT"},
      {"::", "an IPv6 address needs brackets, as in [::1]:PORT"},
      {"[::1", "an IPv6 address needs a closing ']'"},
      {"[::1]x", "expected ':PORT' after the IPv6 address"},
  };
  for (const auto& [text, why] : cases) {
    const auto parsed = parse_host_port(text, 80);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().message, why) << text;
    EXPECT_EQ(parsed.error().code, ExitCode::usage) << text;
  }
}

TEST(HostPort, FormatsIpv6InBrackets) {
  EXPECT_EQ(format_host_port("127.0.0.1", 8080), "127.0.0.1:8080");
  EXPECT_EQ(format_host_port("::1", 8080), "[::1]:8080");
  EXPECT_EQ(format_host_port("spark2", "9931"), "spark2:9931");
  EXPECT_EQ((HostPort{"fe80::1", 50052}).to_string(), "[fe80::1]:50052");
  EXPECT_EQ(bare_host("[::]"), "::");
  EXPECT_EQ(bare_host("::"), "::");
  EXPECT_EQ(bare_host("spark2"), "spark2");
}

TEST(HostPort, InetAddrReadsTheClassicIpv4FormsOnly) {
  for (const char* any :
       {"0", "0.0", "0x0", "000.0.0.0", "0.0.0", "0.0.0.0", "0 junk", "0x00000000"}) {
    EXPECT_EQ(classify_host(any, AddressReader::inet_addr), HostKind::any) << any;
  }
  for (const char* loopback : {"127.0.0.1", "127.1", "0x7f000001", "0177.0.0.1", "127.255.0.9"}) {
    EXPECT_EQ(classify_host(loopback, AddressReader::inet_addr), HostKind::loopback) << loopback;
  }
  EXPECT_EQ(classify_host("192.168.100.2", AddressReader::inet_addr), HostKind::address);
  EXPECT_EQ(classify_host("10.1", AddressReader::inet_addr), HostKind::address);
  // No IPv6, no names, and 255.255.255.255 is inet_addr's error value.
  for (const char* invalid : {"", "::", "::1", "[::]", "localhost", "spark2", "255.255.255.255",
                              "08.0.0.0", "1.2.3.4.5", "256.0.0.0.0"}) {
    EXPECT_EQ(classify_host(invalid, AddressReader::inet_addr), HostKind::invalid) << invalid;
  }
}

TEST(HostPort, TheResolverReadsIpv4ExactlyIpv6AndNames) {
  for (const char* any : {"", "0", "0.0", "0x0", "000.0.0.0", "0.0.0", "0.0.0.0", "::", "0:0::0",
                          "[::]", "::0", "0:0:0:0:0:0:0:0", "::ffff:0.0.0.0"}) {
    EXPECT_EQ(classify_host(any, AddressReader::resolver), HostKind::any) << "'" << any << "'";
  }
  for (const char* loopback : {"127.0.0.1", "127.1", "0x7f000001", "::1", "[::1]", "0:0::1",
                               "::ffff:127.0.0.1", "localhost", "LocalHost", "localhost."}) {
    EXPECT_EQ(classify_host(loopback, AddressReader::resolver), HostKind::loopback) << loopback;
  }
  for (const char* address :
       {"192.168.100.2", "fe80::1", "fe80::1%eth0", "255.255.255.255", "::ffff:10.0.0.1"}) {
    EXPECT_EQ(classify_host(address, AddressReader::resolver), HostKind::address) << address;
  }
  // Nothing may follow getaddrinfo()'s numeric forms: these are names to look up.
  for (const char* name : {"spark2", "0 junk", "localhost.localdomain.x", "1.2.3.4.5"}) {
    EXPECT_EQ(classify_host(name, AddressReader::resolver), HostKind::name) << name;
  }
}

TEST(HostPort, TextAfterANulIsWhatCIgnores) {
  const std::string host("0\0junk", 6);
  EXPECT_EQ(classify_host(host, AddressReader::inet_addr), HostKind::any);
  EXPECT_TRUE(binds_every_interface(host));
}

TEST(HostPort, EveryInterfaceToEitherReader) {
  for (const char* any : {"0", "0x0", "0 junk", "::", "[::]", "", "::ffff:0.0.0.0"}) {
    EXPECT_TRUE(binds_every_interface(any)) << "'" << any << "'";
  }
  for (const char* one : {"127.0.0.1", "::1", "192.168.100.2", "spark2", "localhost"}) {
    EXPECT_FALSE(binds_every_interface(one)) << one;
  }
}

TEST(HostPort, AnAnyAddressBindIsAskedOnTheLoopbackOfItsFamily) {
  EXPECT_EQ(reachable_host("0"), "127.0.0.1");
  EXPECT_EQ(reachable_host("000.0.0.0"), "127.0.0.1");
  EXPECT_EQ(reachable_host(""), "127.0.0.1");
  EXPECT_EQ(reachable_host("::ffff:0.0.0.0"), "127.0.0.1");
  EXPECT_EQ(reachable_host("::"), "::1");
  EXPECT_EQ(reachable_host("[0:0::0]"), "::1");
  EXPECT_EQ(reachable_host("[fe80::1]"), "fe80::1");
  EXPECT_EQ(reachable_host("spark2"), "spark2");
  EXPECT_EQ(reachable_host("127.1"), "127.1");
}

}  // namespace
}  // namespace gb10tune

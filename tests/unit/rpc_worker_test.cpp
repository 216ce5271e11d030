// The worker's command: an any-address bind is refused in every spelling rpc-server reads as
// one, and an address rpc-server cannot bind is refused before anything starts.
#include "gb10tune/rpc/rpc_worker.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune {
namespace {

rpc::WorkerOptions worker_bound_to(const std::string& host, bool expose) {
  rpc::WorkerOptions options;
  options.binary = "/opt/llama.cpp/bin/rpc-server";
  options.bind = {host, 50052};
  options.expose = expose;
  return options;
}

bool message_has(const Error& error, const std::string& text) {
  return error.message.find(text) != std::string::npos;
}

TEST(RpcWorker, EverySpellingOfTheAnyAddressIsRefusedWithoutExpose) {
  // inet_addr(), which rpc-server reads -H with, takes the classic forms: each of these is
  // INADDR_ANY; the IPv6 ones are every interface to a resolver.
  for (const char* host : {"0", "0.0", "0x0", "000.0.0.0", "0.0.0", "0.0.0.0", "0 x", "",
                           "::", "0:0::0", "[::]", "::ffff:0.0.0.0"}) {
    const auto argv = rpc::worker_argv(worker_bound_to(host, false));
    ASSERT_FALSE(argv) << "'" << host << "'";
    EXPECT_EQ(argv.error().code, ExitCode::usage) << host;
    EXPECT_TRUE(message_has(argv.error(), "--expose")) << argv.error().message;
    EXPECT_TRUE(message_has(argv.error(), "no authentication")) << argv.error().message;
  }
}

TEST(RpcWorker, ExposeAllowsTheIpv4AnyAddress) {
  for (const char* host : {"0", "0x0", "0.0.0.0"}) {
    const auto argv = rpc::worker_argv(worker_bound_to(host, true));
    ASSERT_TRUE(argv) << host << ": " << argv.error().message;
    EXPECT_EQ((*argv)[1], "-H");
    EXPECT_EQ((*argv)[2], host);
  }
}

TEST(RpcWorker, ASpecificIpv4AddressIsPassedAsGiven) {
  for (const char* host : {"192.168.100.2", "127.0.0.1", "127.1", "10.1"}) {
    const auto argv = rpc::worker_argv(worker_bound_to(host, false));
    ASSERT_TRUE(argv) << host << ": " << argv.error().message;
    EXPECT_EQ((*argv)[2], host);
  }
}

TEST(RpcWorker, WhatRpcServerCannotBindIsRefusedEvenWithExpose) {
  // rpc-server binds an AF_INET socket to inet_addr(-H): no IPv6, no names, and
  // 255.255.255.255 is inet_addr's error value.
  for (const char* host :
       {"::1", "fe80::1", "[::1]", "localhost", "spark2", "255.255.255.255", "192.168.100.2.7"}) {
    for (const bool expose : {false, true}) {
      const auto argv = rpc::worker_argv(worker_bound_to(host, expose));
      ASSERT_FALSE(argv) << host;
      EXPECT_EQ(argv.error().code, ExitCode::usage) << host;
      EXPECT_TRUE(message_has(argv.error(), "IPv4")) << argv.error().message;
      EXPECT_TRUE(message_has(argv.error(), host)) << argv.error().message;
    }
  }
}

}  // namespace
}  // namespace gb10tune

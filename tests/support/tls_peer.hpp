// Loopback peers for the https tests, as HostilePeer scripts: a TLS server (OpenSSL, with the
// test certificates of tests/fixtures/tls) in front of a plain HTTP peer, a proxy that opens
// CONNECT tunnels, a plain HTTP server that answers whatever arrives, and a peer that accepts and
// never speaks.
#pragma once

#include <memory>
#include <string>

#include "support/hostile_peer.hpp"
#include "support/range_peer.hpp"

namespace gb10tune::testing {

// The test CA's certificate (tests/fixtures/tls/ca.pem), for SSL_CERT_FILE.
std::string test_ca_file();

// The CA of the certificates outside their validity (tests/fixtures/tls/dated-ca.pem: "expired",
// valid in 2001, and "notyet", valid from 2199), for SSL_CERT_FILE.
std::string dated_ca_file();

// Run with PeerStart::at_once: completes a TLS handshake with the certificate `name` of
// tests/fixtures/tls ("server": localhost, 127.0.0.1, ::1; "other": other.invalid only;
// "expired" and "notyet": localhost and 127.0.0.1 outside their validity), then
// relays the session's bytes to and from a plain peer on 127.0.0.1:`backend_port` until either
// side closes. A failed handshake (a client that refuses the certificate) just ends the script.
PeerScript tls_front(const std::string& name, int backend_port);

// A proxy: answers "CONNECT HOST:PORT" with 200 and relays bytes both ways; every request line
// is logged (log->request_lines), and anything but CONNECT gets a 405.
PeerScript connect_proxy(std::shared_ptr<PeerLog> log);

// Run with PeerStart::at_once: a plain HTTP server that answers 400 as soon as any bytes arrive
// (what a web server without TLS does with a TLS handshake).
PeerScript answers_plain_http();

// Run with PeerStart::at_once: accepts and reads, never answers, until the client goes.
PeerScript never_answers();

// "https://127.0.0.1:PORT" of a peer.
std::string https_url(const HostilePeer& peer);

}  // namespace gb10tune::testing

// A resolver that hangs, for the network clients' deadlines: preloaded (LD_PRELOAD) into the
// gb10tune binary, it makes a lookup (getaddrinfo() without AI_NUMERICHOST) of any name under
// ".slow.invalid" sleep 30 s and fail, as one against an unreachable DNS server does. Every
// other call goes to libc.
#include <dlfcn.h>
#include <netdb.h>
#include <unistd.h>

#include <cstring>

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                           addrinfo** found) {
  using Getaddrinfo = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<Getaddrinfo>(::dlsym(RTLD_NEXT, "getaddrinfo"));
  // A numeric-only call (AI_NUMERICHOST) never asks a DNS server, in libc as here.
  const bool lookup = hints == nullptr || (hints->ai_flags & AI_NUMERICHOST) == 0;
  if (lookup && node != nullptr && std::strstr(node, ".slow.invalid") != nullptr) {
    ::sleep(30);
    return EAI_AGAIN;
  }
  return real(node, service, hints, found);
}

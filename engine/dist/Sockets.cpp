#include "engine/dist/Sockets.h"

#include "engine/dist/KeyValueStore.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ps {
namespace net {

// Waits until `fd` is readable or writable, at most until `deadline` (none: Clock::time_point::max()).
bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      ms = int(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

namespace {

// Moves exactly n bytes with `io` (recv or send), waiting for `events` before each call. A call that moves nothing
// means the peer closed.
template <class Io>
bool transferExact(int fd, short events, size_t n, Clock::time_point deadline, Io io) {
  while (n > 0) {
    if (!waitFor(fd, events, deadline)) return false;
    const ssize_t r = io(n);
    if (r == 0) return false;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    n -= size_t(r);
  }
  return true;
}

}  // namespace

bool readExact(int fd, uint8_t* data, size_t n, Clock::time_point deadline) {
  return transferExact(fd, POLLIN, n, deadline, [&](size_t left) {
    const ssize_t r = ::recv(fd, data, left, 0);
    if (r > 0) data += r;
    return r;
  });
}

bool writeExact(int fd, const uint8_t* data, size_t n, Clock::time_point deadline) {
  return transferExact(fd, POLLOUT, n, deadline, [&](size_t left) {
    const ssize_t r = ::send(fd, data, left, MSG_NOSIGNAL);
    if (r > 0) data += r;
    return r;
  });
}

bool sameSecret(const std::string& a, const std::vector<uint8_t>& b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < b.size(); ++i) diff |= unsigned(uint8_t(a[i % std::max<size_t>(a.size(), 1)]) ^ b[i]);
  return diff == 0;
}

AddressList::AddressList(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &head);
  if (rc != 0)
    throw RendezvousError("the rendezvous address '" + host + "' does not resolve (" + ::gai_strerror(rc) +
                          "); check MASTER_ADDR");
}

AddressList::~AddressList() {
  if (head) ::freeaddrinfo(head);
}

void noDelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace net

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket(): ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot find a free port on 127.0.0.1: " + why);
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string newStoreToken() {
  uint8_t raw[16];
  size_t got = 0;
  while (got < sizeof raw) {
    const ssize_t r = ::getrandom(raw + got, sizeof raw - got, 0);
    if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("getrandom(): ") + std::strerror(errno));
    if (r > 0) got += size_t(r);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : raw) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

}  // namespace ps

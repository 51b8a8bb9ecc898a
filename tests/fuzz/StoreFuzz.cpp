// libFuzzer target for the rendezvous store's server: each input is the byte stream one connection sends (greeting,
// then requests), played against a fresh server on loopback. Anyone who reaches the store's port can send such a
// stream, so the server must neither crash nor allocate for sizes it has not checked, and every answer it gives must be
// a well-formed frame: status (0 ok, 1 missing, 2 refused), 4-byte length, that many bytes.
//   build/fuzz/fuzz_store -max_total_time=60 tests/fuzz/corpus/store
#include "engine/dist/KeyValueStore.h"
#include "engine/dist/Sockets.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace ps;

// connect(), through the signals libFuzzer's watchdog timer delivers: an interrupted connect goes on in the kernel,
// so wait until the socket is writable and read how it ended instead of calling that a failure.
bool connectThroughSignals(int fd, const sockaddr* address, socklen_t length) {
  if (::connect(fd, address, length) == 0) return true;
  if (errno != EINTR) return false;
  if (!net::waitFor(fd, POLLOUT, net::Clock::now() + std::chrono::seconds(8))) return false;
  int error = 0;
  socklen_t size = sizeof error;
  return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
}

// Connects to the server, sends the input, closes the sending half and reads every answer until the server closes.
std::vector<uint8_t> converse(int port, const uint8_t* data, size_t size) {
  std::vector<uint8_t> answers;
  const net::AddressList list("127.0.0.1", port);
  const int fd = ::socket(list.head->ai_family, list.head->ai_socktype | SOCK_CLOEXEC, list.head->ai_protocol);
  if (fd < 0 || !connectThroughSignals(fd, list.head->ai_addr, list.head->ai_addrlen)) {
    std::perror("fuzz_store: cannot reach the server");
    std::abort();
  }
  const auto deadline = net::Clock::now() + std::chrono::seconds(8);
  // The server answers as it reads, so a long stream is written while answers are drained, never both blocked.
  size_t sent = 0;
  uint8_t buffer[4096];
  bool closedSending = false;
  for (;;) {
    if (sent == size && !closedSending) {
      ::shutdown(fd, SHUT_WR);
      closedSending = true;
    }
    const short events = closedSending ? POLLIN : short(POLLIN | POLLOUT);
    if (!net::waitFor(fd, events, deadline)) break;
    pollfd p{fd, events, 0};
    ::poll(&p, 1, 0);
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      answers.insert(answers.end(), buffer, buffer + got);
    } else if (p.revents & POLLOUT) {
      const ssize_t put = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (put < 0) break;  // the server closed on a protocol error: what it answered before is still read above
      sent += size_t(put);
    }
  }
  ::close(fd);
  return answers;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Every input's fresh server listens on the first one's port (the listener reuses its address). Over a thousand
  // connections a second each leave a port in TIME_WAIT for a minute; servers on new ports every time would take
  // listening ports from the same ephemeral range until none is left. Should the port be taken meanwhile, any will do.
  static int port = 0;
  std::unique_ptr<KeyValueServer> server;
  for (int attempt : {port, 0}) {
    try {
      server = std::make_unique<KeyValueServer>("127.0.0.1", attempt, "", 4);  // no token: the greeting is empty
      break;
    } catch (const std::exception& e) {  // the machine, not the input: said as such rather than a bare abort
      if (attempt != 0) continue;
      std::fprintf(stderr, "fuzz_store: cannot start a server: %s\n", e.what());
      std::abort();
    }
  }
  port = server->port();
  const std::vector<uint8_t> answers = converse(server->port(), data, size);
  for (size_t at = 0; at < answers.size();) {
    if (answers.size() - at < 5 || answers[at] > uint8_t(store::Status::Refused)) {
      std::fprintf(stderr, "fuzz_store: a malformed answer at byte %zu\n", at);
      std::abort();
    }
    const uint32_t length = store::getU32(answers.data() + at + 1);
    if (length > answers.size() - at - 5) {
      std::fprintf(stderr, "fuzz_store: an answer of %u bytes overruns the stream\n", length);
      std::abort();
    }
    at += 5 + length;
  }
  return 0;
}

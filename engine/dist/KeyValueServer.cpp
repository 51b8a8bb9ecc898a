// The rendezvous store's server: one thread accepts, one thread per connection answers (a run has a few dozen).
#include "engine/dist/KeyValueStore.h"
#include "engine/dist/Sockets.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <thread>

namespace ps {

using namespace store;
using namespace net;

struct KeyValueServer::Impl {
  struct Connection {
    int fd = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  int listenFd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::string token;
  size_t maxConnections = 0;

  std::mutex dataMutex;
  std::map<std::string, std::vector<uint8_t>> data;
  uint64_t storedBytes = 0;

  std::mutex connectionsMutex;
  std::list<std::unique_ptr<Connection>> connections;
  std::thread acceptor;

  void acceptLoop();
  void serve(Connection& c);
  std::pair<Status, std::vector<uint8_t>> handle(Op op, const std::string& key, std::vector<uint8_t>& value);
  bool store(const std::string& key, std::vector<uint8_t> value, std::string* why);
  void reap(bool all);
};

bool KeyValueServer::Impl::store(const std::string& key, std::vector<uint8_t> value, std::string* why) {
  const auto it = data.find(key);
  const uint64_t old = it == data.end() ? 0 : key.size() + it->second.size();
  const uint64_t next = storedBytes - old + key.size() + value.size();
  if (next > kMaxStoredBytes) {
    *why = "the store holds its limit of " + std::to_string(kMaxStoredBytes >> 20) + " MiB";
    return false;
  }
  if (it == data.end() && data.size() >= kMaxKeys) {
    *why = "the store holds its limit of " + std::to_string(kMaxKeys) + " keys";
    return false;
  }
  storedBytes = next;
  data[key] = std::move(value);
  return true;
}

std::pair<Status, std::vector<uint8_t>> KeyValueServer::Impl::handle(Op op, const std::string& key,
                                                                     std::vector<uint8_t>& value) {
  auto refuse = [](const std::string& why) {
    return std::make_pair(Status::Refused, std::vector<uint8_t>(why.begin(), why.end()));
  };
  std::lock_guard<std::mutex> lock(dataMutex);
  const auto it = data.find(key);
  std::string why;
  switch (op) {
    case Op::Set:
      if (!store(key, std::move(value), &why)) return refuse(why);
      return {Status::Ok, {}};
    case Op::Get:
      if (it == data.end()) return {Status::Missing, {}};
      return {Status::Ok, it->second};
    case Op::Check:
      return {it == data.end() ? Status::Missing : Status::Ok, {}};
    case Op::Delete:
      if (it == data.end()) return {Status::Missing, {}};
      storedBytes -= key.size() + it->second.size();
      data.erase(it);
      return {Status::Ok, {}};
    case Op::NumKeys:
      return {Status::Ok, int64Bytes(int64_t(data.size()))};
    case Op::Add: {
      int64_t now = 0;
      if (it != data.end()) {
        const std::string text(it->second.begin(), it->second.end());
        char* end = nullptr;
        errno = 0;
        now = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end || errno) return refuse("the value of '" + key + "' is not a counter");
      }
      if (__builtin_add_overflow(now, bytesInt64(value), &now)) return refuse("the counter '" + key + "' overflows");
      const std::string text = std::to_string(now);
      if (!store(key, std::vector<uint8_t>(text.begin(), text.end()), &why)) return refuse(why);
      return {Status::Ok, int64Bytes(now)};
    }
    case Op::CompareSet: {
      const uint32_t expectedBytes = getU32(value.data());
      if (expectedBytes > value.size() - 4) return refuse("a compare-and-set whose expected value overruns it");
      std::vector<uint8_t> expected(value.begin() + 4, value.begin() + 4 + expectedBytes);
      std::vector<uint8_t> desired(value.begin() + 4 + expectedBytes, value.end());
      if (it == data.end() ? !expected.empty() : it->second != expected)
        return {Status::Ok, it == data.end() ? expected : it->second};
      if (!store(key, desired, &why)) return refuse(why);
      return {Status::Ok, desired};
    }
    case Op::Hello:
      return refuse("a second greeting");
  }
  return refuse("an unknown operation");
}

void KeyValueServer::Impl::serve(Connection& c) {
  // The greeting must come within a few seconds: a connection that never speaks holds no slot for long.
  bool greeted = false;
  for (;;) {
    const auto deadline = greeted ? Clock::time_point::max() : Clock::now() + std::chrono::seconds(5);
    uint8_t head[kRequestHeaderBytes];
    if (!readExact(c.fd, head, sizeof head, deadline)) break;
    RequestHeader h;
    try {
      h = parseRequestHeader(head, sizeof head);
      if (!greeted && h.op != Op::Hello) throw RendezvousError("a request before the greeting");
    } catch (const RendezvousError&) {
      break;  // a peer that breaks the protocol is not answered
    }
    std::string key(h.keyBytes, '\0');
    std::vector<uint8_t> value(h.valueBytes);
    if (!readExact(c.fd, reinterpret_cast<uint8_t*>(key.data()), key.size(), deadline) ||
        !readExact(c.fd, value.data(), value.size(), deadline))
      break;
    std::pair<Status, std::vector<uint8_t>> answer;
    if (!greeted) {
      if (!sameSecret(token, value)) break;  // a wrong token: the connection closes, nothing is told
      greeted = true;
      answer = {Status::Ok, {}};
    } else {
      answer = handle(h.op, key, value);
    }
    std::vector<uint8_t> out(5 + answer.second.size());
    out[0] = uint8_t(answer.first);
    putU32(out.data() + 1, uint32_t(answer.second.size()));
    if (!answer.second.empty()) std::memcpy(out.data() + 5, answer.second.data(), answer.second.size());
    if (!writeExact(c.fd, out.data(), out.size(), Clock::now() + std::chrono::seconds(30))) break;
  }
  ::shutdown(c.fd, SHUT_RDWR);
  c.done = true;
}

void KeyValueServer::Impl::reap(bool all) {
  std::lock_guard<std::mutex> lock(connectionsMutex);
  for (auto it = connections.begin(); it != connections.end();) {
    Connection& c = **it;
    if (!all && !c.done) {
      ++it;
      continue;
    }
    ::shutdown(c.fd, SHUT_RDWR);
    if (c.thread.joinable()) c.thread.join();
    ::close(c.fd);
    it = connections.erase(it);
  }
}

void KeyValueServer::Impl::acceptLoop() {
  for (;;) {
    pollfd p[2] = {{listenFd, POLLIN, 0}, {wake[0], POLLIN, 0}};
    if (::poll(p, 2, 1000) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    reap(false);
    if (!(p[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(connectionsMutex);
    if (connections.size() >= maxConnections) {
      ::close(fd);
      continue;
    }
    noDelay(fd);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    Connection& ref = *c;
    connections.push_back(std::move(c));
    ref.thread = std::thread([this, &ref] { serve(ref); });
  }
}

KeyValueServer::KeyValueServer(const std::string& address, int port, std::string token, size_t maxConnections)
    : impl_(std::make_unique<Impl>()) {
  impl_->token = std::move(token);
  impl_->maxConnections = maxConnections;
  const AddressList list(address, port);
  std::string why = "no address";
  for (addrinfo* a = list.head; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      impl_->listenFd = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  if (impl_->listenFd < 0)
    throw RendezvousError("the rendezvous store cannot listen on " + address + ":" + std::to_string(port) + " (" + why +
                          "); name an address of this machine in MASTER_ADDR and a free port in MASTER_PORT");
  sockaddr_storage s{};
  socklen_t len = sizeof s;
  ::getsockname(impl_->listenFd, reinterpret_cast<sockaddr*>(&s), &len);
  impl_->port = ntohs(s.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&s)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&s)->sin_port);
  if (::pipe2(impl_->wake, O_CLOEXEC) != 0) {
    ::close(impl_->listenFd);
    throw RendezvousError(std::string("the rendezvous store cannot start: ") + std::strerror(errno));
  }
  impl_->acceptor = std::thread([impl = impl_.get()] { impl->acceptLoop(); });
}

KeyValueServer::~KeyValueServer() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t w = ::write(impl_->wake[1], &stop, 1);
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  impl_->reap(true);
  ::close(impl_->listenFd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

int KeyValueServer::port() const {
  return impl_->port;
}

}  // namespace ps

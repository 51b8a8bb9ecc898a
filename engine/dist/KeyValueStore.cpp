#include "engine/dist/KeyValueStore.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <map>
#include <thread>

namespace ps {
namespace store {

namespace {

void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint32_t getU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

std::vector<uint8_t> int64Bytes(int64_t v) {
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(v) >> (8 * i));
  return out;
}

int64_t bytesInt64(const std::vector<uint8_t>& b) {
  if (b.size() != 8) throw RendezvousError("the rendezvous store answered " + std::to_string(b.size()) + " bytes for a count");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[size_t(i)]) << (8 * i);
  return int64_t(v);
}

using Clock = std::chrono::steady_clock;

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

// Reads or writes exactly n bytes. False when the peer closed, an error occurred or the deadline passed.
bool readExact(int fd, uint8_t* data, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    if (!waitFor(fd, POLLIN, deadline)) return false;
    const ssize_t r = ::recv(fd, data, n, 0);
    if (r == 0) return false;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    data += r;
    n -= size_t(r);
  }
  return true;
}

bool writeExact(int fd, const uint8_t* data, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    if (!waitFor(fd, POLLOUT, deadline)) return false;
    const ssize_t r = ::send(fd, data, n, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    data += r;
    n -= size_t(r);
  }
  return true;
}

struct AddressList {
  addrinfo* head = nullptr;
  AddressList(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &head);
    if (rc != 0)
      throw RendezvousError("the rendezvous address '" + host + "' does not resolve (" + ::gai_strerror(rc) +
                       "); check MASTER_ADDR");
  }
  ~AddressList() {
    if (head) ::freeaddrinfo(head);
  }
};

void noDelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Compares without stopping at the first difference, so the time taken says nothing about the token.
bool sameSecret(const std::string& a, const std::vector<uint8_t>& b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < b.size(); ++i) diff |= unsigned(uint8_t(a[i % std::max<size_t>(a.size(), 1)]) ^ b[i]);
  return diff == 0;
}

}  // namespace

RequestHeader parseRequestHeader(const uint8_t* bytes, size_t size) {
  if (size < kRequestHeaderBytes)
    throw RendezvousError("a request header of " + std::to_string(size) + " bytes (it has " +
                     std::to_string(kRequestHeaderBytes) + ")");
  RequestHeader h;
  if (bytes[0] < uint8_t(Op::Hello) || bytes[0] > uint8_t(Op::CompareSet))
    throw RendezvousError("an unknown operation " + std::to_string(int(bytes[0])));
  h.op = Op(bytes[0]);
  h.keyBytes = getU32(bytes + 1);
  h.valueBytes = getU32(bytes + 5);
  if (h.keyBytes > kMaxKeyBytes)
    throw RendezvousError("a key of " + std::to_string(h.keyBytes) + " bytes (at most " + std::to_string(kMaxKeyBytes) + ")");
  if (h.valueBytes > kMaxValueBytes)
    throw RendezvousError("a value of " + std::to_string(h.valueBytes) + " bytes (at most " +
                     std::to_string(kMaxValueBytes) + ")");
  const bool keyed = h.op != Op::Hello && h.op != Op::NumKeys;
  if (keyed != (h.keyBytes > 0)) throw RendezvousError(keyed ? "a request without a key" : "a key where none belongs");
  const bool valued = h.op == Op::Hello || h.op == Op::Set || h.op == Op::Add || h.op == Op::CompareSet;
  if (!valued && h.valueBytes > 0) throw RendezvousError("a value where none belongs");
  if (h.op == Op::Add && h.valueBytes != 8) throw RendezvousError("an increment of " + std::to_string(h.valueBytes) + " bytes");
  if (h.op == Op::CompareSet && h.valueBytes < 4) throw RendezvousError("a compare-and-set without its expected value");
  if (h.op == Op::Hello && h.valueBytes > 256) throw RendezvousError("a token of " + std::to_string(h.valueBytes) + " bytes");
  return h;
}

}  // namespace store

using namespace store;

// ---------------------------------------------------------------------------------------------------------------
// Server

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
    case Op::Check: return {it == data.end() ? Status::Missing : Status::Ok, {}};
    case Op::Delete:
      if (it == data.end()) return {Status::Missing, {}};
      storedBytes -= key.size() + it->second.size();
      data.erase(it);
      return {Status::Ok, {}};
    case Op::NumKeys: return {Status::Ok, int64Bytes(int64_t(data.size()))};
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
    case Op::Hello: return refuse("a second greeting");
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

int KeyValueServer::port() const { return impl_->port; }

// ---------------------------------------------------------------------------------------------------------------
// Client

KeyValueClient::KeyValueClient(const std::string& address, int port, std::string token,
                               std::chrono::milliseconds timeout)
    : address_(address), port_(port), token_(std::move(token)), timeout_(timeout) {
  const auto deadline = Clock::now() + timeout_;
  std::string why;
  while (fd_ < 0) {
    const AddressList list(address_, port_);
    for (addrinfo* a = list.head; a && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
        break;
      }
      why = std::strerror(errno);
      ::close(fd);
    }
    if (fd_ >= 0) break;
    if (Clock::now() >= deadline)
      throw RendezvousError("timed out after " + std::to_string(timeout_.count()) + " ms connecting to the rendezvous store at " +
                       where() + " (" + why + "); check MASTER_ADDR/MASTER_PORT and that rank 0 runs");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  noDelay(fd_);
  try {
    call(Op::Hello, "", std::vector<uint8_t>(token_.begin(), token_.end()));
  } catch (const RendezvousError& e) {
    throw RendezvousError("the rendezvous store at " + where() + " did not accept this rank (" + e.what() +
                     "): every rank needs rank 0's PIPESQUEEZE_STORE_TOKEN");
  }
}

KeyValueClient::~KeyValueClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string KeyValueClient::where() const { return address_ + ":" + std::to_string(port_); }

std::pair<Status, std::vector<uint8_t>> KeyValueClient::call(Op op, const std::string& key,
                                                             const std::vector<uint8_t>& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) throw RendezvousError("the connection to the rendezvous store at " + where() + " is closed");
  if (key.size() > kMaxKeyBytes || value.size() > kMaxValueBytes)
    throw RendezvousError("a store entry of " + std::to_string(key.size()) + " + " + std::to_string(value.size()) +
                     " bytes is larger than the store takes");
  std::vector<uint8_t> out(kRequestHeaderBytes + key.size() + value.size());
  out[0] = uint8_t(op);
  putU32(out.data() + 1, uint32_t(key.size()));
  putU32(out.data() + 5, uint32_t(value.size()));
  std::memcpy(out.data() + kRequestHeaderBytes, key.data(), key.size());
  if (!value.empty()) std::memcpy(out.data() + kRequestHeaderBytes + key.size(), value.data(), value.size());
  const auto deadline = Clock::now() + timeout_;
  uint8_t head[5];
  const bool sent = writeExact(fd_, out.data(), out.size(), deadline);
  if (!sent || !readExact(fd_, head, sizeof head, deadline)) {
    const bool late = Clock::now() >= deadline;
    ::close(fd_);
    fd_ = -1;
    throw RendezvousError(late ? "the rendezvous store at " + where() + " timed out (no answer within " +
                                std::to_string(timeout_.count()) + " ms)"
                          : "the rendezvous store at " + where() + " closed the connection (rank 0 stopped)");
  }
  const uint32_t size = getU32(head + 1);
  if (head[0] > uint8_t(Status::Refused) || size > kMaxValueBytes + 4096u) {
    ::close(fd_);
    fd_ = -1;
    throw RendezvousError("the rendezvous store at " + where() + " sent a malformed answer");
  }
  std::vector<uint8_t> body(size);
  if (!readExact(fd_, body.data(), body.size(), deadline)) {
    ::close(fd_);
    fd_ = -1;
    throw RendezvousError("the rendezvous store at " + where() + " broke off an answer");
  }
  if (Status(head[0]) == Status::Refused)
    throw RendezvousError("the rendezvous store refused a request: " + std::string(body.begin(), body.end()));
  return {Status(head[0]), std::move(body)};
}

void KeyValueClient::set(const std::string& key, const std::vector<uint8_t>& value) { call(Op::Set, key, value); }

std::optional<std::vector<uint8_t>> KeyValueClient::get(const std::string& key) {
  auto answer = call(Op::Get, key, {});
  if (answer.first == Status::Missing) return std::nullopt;
  return std::move(answer.second);
}

int64_t KeyValueClient::add(const std::string& key, int64_t delta) {
  return bytesInt64(call(Op::Add, key, int64Bytes(delta)).second);
}

bool KeyValueClient::check(const std::string& key) { return call(Op::Check, key, {}).first == Status::Ok; }

bool KeyValueClient::erase(const std::string& key) { return call(Op::Delete, key, {}).first == Status::Ok; }

int64_t KeyValueClient::numKeys() { return bytesInt64(call(Op::NumKeys, "", {}).second); }

std::vector<uint8_t> KeyValueClient::compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                                const std::vector<uint8_t>& desired) {
  std::vector<uint8_t> v(4 + expected.size() + desired.size());
  putU32(v.data(), uint32_t(expected.size()));
  std::copy(expected.begin(), expected.end(), v.begin() + 4);
  std::copy(desired.begin(), desired.end(), v.begin() + 4 + std::ptrdiff_t(expected.size()));
  return call(Op::CompareSet, key, v).second;
}

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

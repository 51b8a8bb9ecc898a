#include "engine/dist/LinkStream.h"

#include "engine/dist/Cluster.h"
#include "engine/dist/Framing.h"
#include "engine/dist/Sockets.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ps {
namespace {

using net::Clock;

// What a sending end presents first: the link's name and the run's token, so a stray or hostile connection to the
// listening port is told apart and closed.
struct Hello {
  static constexpr uint64_t kMagic = 0x314b4e494c535050;  // "PPSLINK1"
  uint64_t magic = kMagic;
  uint32_t keyBytes = 0, tokenBytes = 0;
};
static_assert(sizeof(Hello) == 16, "the hello is 16 bytes on the wire");

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void nonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Writes the header and the body in one stream of segments (one writev where the socket takes it all). Fails when
// the peer closes or takes nothing for `silence` seconds; a slow link that keeps taking bytes is no failure.
bool writeMessage(int fd, const WireHeader& h, const std::vector<uint8_t>& body, double silence) {
  iovec parts[2] = {{const_cast<WireHeader*>(&h), sizeof h},
                    {const_cast<uint8_t*>(body.data()), body.size()}};
  int first = 0;
  while (first < 2) {
    if (!net::waitFor(fd, POLLOUT, after(silence))) return false;
    msghdr m{};
    m.msg_iov = parts + first;
    m.msg_iovlen = size_t(2 - first);
    const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    size_t left = size_t(n);
    while (first < 2 && left >= parts[first].iov_len) left -= parts[first++].iov_len;
    if (first < 2) {
      parts[first].iov_base = static_cast<uint8_t*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return true;
}

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

// The stream addresses of host:port, or a ClusterError saying `what` (the store's errors name MASTER_ADDR).
template <class F>
void forEachAddress(const std::string& host, int port, const std::string& what, F&& f) {
  try {
    net::AddressList addresses(host, port);
    for (addrinfo* a = addresses.head; a; a = a->ai_next)
      if (f(a)) return;
  } catch (const std::exception& e) {
    throw ClusterError(what + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<LinkStream> LinkStream::receiving(const std::string& bindAddress, const std::string& key, Peer peer,
                                                  const Share& share) {
  std::unique_ptr<LinkStream> s(new LinkStream(key, std::move(peer)));
  std::string why = "no address";
  forEachAddress(bindAddress, 0, s->peer_.self + ": the link from " + s->peer_.other, [&](addrinfo* a) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) return false;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      s->listenFd_ = fd;
      return true;
    }
    why = std::strerror(errno);
    ::close(fd);
    return false;
  });
  if (s->listenFd_ < 0)
    throw ClusterError(s->peer_.self + ": cannot listen on " + bindAddress + " for the link from " + s->peer_.other +
                       " (" + why + ")");
  nonBlocking(s->listenFd_);
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(s->listenFd_, reinterpret_cast<sockaddr*>(&local), &len);
  s->port_ = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  share(key, true, bytesOf(bindAddress + "\n" + std::to_string(s->port_)));
  return s;
}

std::unique_ptr<LinkStream> LinkStream::sending(const std::string& bindAddress, const std::string& key, Peer peer,
                                                const Share& share) {
  std::unique_ptr<LinkStream> s(new LinkStream(key, std::move(peer)));
  // The address comes from the store, written by a rank of this run: still checked before it is used.
  const auto published = share(key, false, {});
  const std::string text(published.begin(), published.end());
  const auto cut = text.find('\n');
  const std::string host = cut == std::string::npos ? "" : text.substr(0, cut),
                    portText = cut == std::string::npos ? "" : text.substr(cut + 1);
  const bool portOk = !portText.empty() && portText.size() <= 5 &&
                      portText.find_first_not_of("0123456789") == std::string::npos && std::stoi(portText) > 0 &&
                      std::stoi(portText) < 65536;
  if (host.empty() || host.size() > 255 || !portOk)
    throw ClusterError(s->peer_.self + ": the address " + s->peer_.other + " published for its link is malformed");
  const auto deadline = after(s->peer_.timeout_s);
  std::string why;
  // The receiving end listened before it published, so a refusal is not expected; one is retried until the
  // deadline all the same (a busy listener's backlog).
  // The connection leaves from this rank's own address (--bind), as its listening ends listen there.
  sockaddr_storage source{};
  socklen_t sourceBytes = 0;
  forEachAddress(bindAddress, 0, s->peer_.self + ": the link to " + s->peer_.other, [&](addrinfo* a) {
    std::memcpy(&source, a->ai_addr, a->ai_addrlen);
    sourceBytes = a->ai_addrlen;
    return true;
  });
  while (s->fd_ < 0 && Clock::now() < deadline) {
    forEachAddress(host, std::stoi(portText), s->peer_.self + ": the link to " + s->peer_.other, [&](addrinfo* a) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) return false;
      nonBlocking(fd);
      int err = 0;
      socklen_t len = sizeof err;
      if (a->ai_family == source.ss_family && ::bind(fd, reinterpret_cast<sockaddr*>(&source), sourceBytes) != 0) {
        err = errno;
      } else if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
        err = errno;
      } else if (!net::waitFor(fd, POLLOUT, deadline)) {
        err = ETIMEDOUT;
      } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
      if (err == 0) {
        s->fd_ = fd;
        return true;
      }
      why = std::strerror(err);
      ::close(fd);
      return false;
    });
    if (s->fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (s->fd_ < 0)
    throw ClusterError(s->peer_.self + ": cannot connect to " + s->peer_.other + " at " + host + " port " + portText +
                       " for the link (" + why + "); check that the machines reach each other there");
  net::noDelay(s->fd_);
  Hello hello;
  hello.keyBytes = uint32_t(key.size());
  hello.tokenBytes = uint32_t(s->peer_.token.size());
  std::vector<uint8_t> intro(sizeof hello);
  std::memcpy(intro.data(), &hello, sizeof hello);
  intro.insert(intro.end(), key.begin(), key.end());
  intro.insert(intro.end(), s->peer_.token.begin(), s->peer_.token.end());
  if (!net::writeExact(s->fd_, intro.data(), intro.size(), deadline))
    throw ClusterError(s->peer_.self + ": " + s->peer_.other + " closed the link's connection at once");
  s->writer_ = std::thread([p = s.get()] { p->writeLoop(); });
  return s;
}

LinkStream::~LinkStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  // A write blocked on a peer that stopped reading ends here; bytes already with the kernel still go out.
  if (writer_.joinable()) {
    ::shutdown(fd_, SHUT_RDWR);
    writer_.join();
  }
  if (fd_ >= 0) ::close(fd_);
  if (listenFd_ >= 0) ::close(listenFd_);
}

void LinkStream::send(std::vector<uint8_t> bytes, double stamp, int64_t deliverNs) {
  send(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), stamp, deliverNs);
}

void LinkStream::send(std::shared_ptr<const std::vector<uint8_t>> bytes, double stamp, int64_t deliverNs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) throw ClusterError(error_);
    queue_.push_back({std::move(bytes), stamp, deliverNs});
  }
  changed_.notify_all();
}

void LinkStream::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !error_.empty() || (queue_.empty() && !writing_); });
  if (!error_.empty()) throw ClusterError(error_);
}

void LinkStream::writeLoop() {
  for (;;) {
    Outgoing o;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      o = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
    }
    WireHeader h;
    h.bytes = o.bytes->size();
    h.stamp = o.stamp;
    h.deliver_ns = o.deliverNs;
    const bool ok = writeMessage(fd_, h, *o.bytes, peer_.timeout_s);
    o.bytes.reset();  // before flush() can return: the sender may reuse a buffer nobody else holds
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      if (!ok) {
        error_ = "sending failed: " + peer_.other + " closed its connection (it stopped or crashed) or took nothing " +
                 "for " + seconds(peer_.timeout_s) + " (parallel.timeout_s); seen by " + peer_.self;
        queue_.clear();
      }
    }
    changed_.notify_all();
    if (!ok) return;
  }
}

namespace {

// "127.0.0.1:53012": who connected, for the log line of a connection that is ignored.
std::string peerName(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    ::getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV);
  return a.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

}  // namespace

bool LinkStream::introduces(int fd, Clock::time_point deadline) const {
  // Sizes are compared with this end's own before anything is read into a buffer of theirs.
  Hello hello;
  if (!net::readExact(fd, reinterpret_cast<uint8_t*>(&hello), sizeof hello, deadline) || hello.magic != Hello::kMagic ||
      hello.keyBytes != key_.size() || hello.tokenBytes != peer_.token.size())
    return false;
  std::string key(hello.keyBytes, '\0');
  std::vector<uint8_t> token(hello.tokenBytes);
  return net::readExact(fd, reinterpret_cast<uint8_t*>(key.data()), key.size(), deadline) &&
         net::readExact(fd, token.data(), token.size(), deadline) && key == key_ && net::sameSecret(peer_.token, token);
}

void LinkStream::ignore(int fd, const char* why) const {
  std::fprintf(stderr, "%s: ignored a connection from %s to the link %s: %s\n", peer_.self.c_str(),
               peerName(fd).c_str(), key_.c_str(), why);
  ::close(fd);
}

// Every connection is a candidate until it has introduced itself as this link of this run (its hello, name and
// token) or failed to within kIntroSeconds; candidates are watched together, so connections that say nothing, or
// nonsense, never hold up the peer's behind them. Nothing a candidate sent is used. The peer is waited for until the
// run's timeout, whatever else connects meanwhile.
void LinkStream::accept() {
  if (fd_ >= 0) return;
  constexpr double kIntroSeconds = 5;
  constexpr size_t kMostCandidates = 64;
  const auto deadline = after(peer_.timeout_s);
  struct Candidate {
    int fd;
    Clock::time_point until;
  };
  std::vector<Candidate> candidates;
  std::vector<pollfd> watched;
  while (fd_ < 0) {
    const auto now = Clock::now();
    if (now >= deadline) {
      for (const Candidate& c : candidates) ignore(c.fd, "the link's peer never came");
      throw ClusterError(peer_.other + " sent nothing for " + seconds(peer_.timeout_s) +
                         " (parallel.timeout_s): it never connected its link; seen by " + peer_.self);
    }
    auto wake = deadline;
    for (auto c = candidates.begin(); c != candidates.end();) {
      if (c->until > now) {
        wake = std::min(wake, c->until);
        ++c;
        continue;
      }
      ignore(c->fd, "it did not introduce itself within 5 s");
      c = candidates.erase(c);
    }
    watched.assign(1, pollfd{listenFd_, POLLIN, 0});
    for (const Candidate& c : candidates) watched.push_back(pollfd{c.fd, POLLIN, 0});
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
    if (::poll(watched.data(), nfds_t(watched.size()), int(std::min<int64_t>(ms, 1000))) <= 0) continue;
    // Candidates with bytes waiting: a hello arrives whole with its connection, so one short read decides.
    for (size_t i = watched.size() - 1; i >= 1 && fd_ < 0; --i) {
      if (!watched[i].revents) continue;
      const int fd = candidates[i - 1].fd;
      candidates.erase(candidates.begin() + std::ptrdiff_t(i - 1));
      if (introduces(fd, std::min(deadline, after(1)))) {
        net::noDelay(fd);
        fd_ = fd;
      } else {
        ignore(fd, "it did not present this link's name and the run's token");
      }
    }
    if (fd_ >= 0 || !(watched[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {  // out of descriptors, say: no busy loop until the deadline
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (candidates.size() >= kMostCandidates) {  // a flood: the oldest makes room, the peer's newest stays
      ignore(candidates.front().fd, "too many connections were waiting to introduce themselves");
      candidates.erase(candidates.begin());
    }
    candidates.push_back({fd, after(kIntroSeconds)});
  }
  for (const Candidate& c : candidates) ignore(c.fd, "the link's peer came first");
  ::close(listenFd_);
  listenFd_ = -1;
}

std::vector<uint8_t> LinkStream::receive(uint64_t limit, double* stamp, int64_t* deliverNs) {
  std::vector<uint8_t> bytes;
  receiveInto(bytes, limit, stamp, deliverNs);
  return bytes;
}

void LinkStream::receiveInto(std::vector<uint8_t>& bytes, uint64_t limit, double* stamp, int64_t* deliverNs) {
  if (fd_ < 0) accept();
  // The timeout bounds silence: the wait for the header, then each chunk of the body (16 MiB) on its own.
  auto deadline = after(peer_.timeout_s);
  auto failed = [&]() {  // a wait ends up to a millisecond early (poll's resolution); a close ends it at once
    if (Clock::now() + std::chrono::milliseconds(10) >= deadline)
      return ClusterError(peer_.other + " sent nothing for " + seconds(peer_.timeout_s) +
                          " (parallel.timeout_s): it hangs or stopped; seen by " + peer_.self);
    return ClusterError(peer_.other + " closed its connection (it stopped or crashed); seen by " + peer_.self);
  };
  uint8_t head[sizeof(WireHeader)];
  if (!net::readExact(fd_, head, sizeof head, deadline)) throw failed();
  WireHeader h;
  try {
    h = parseHeader(head, sizeof head, std::min(limit, Cluster::kMaxMessageBytes));
  } catch (const FrameError& e) {
    throw ClusterError(peer_.other + " sent " + e.what() + "; seen by " + peer_.self);
  }
  const auto chunk = [&](uint8_t* into, size_t size) {
    deadline = after(peer_.timeout_s);
    if (!net::readExact(fd_, into, size, deadline)) throw failed();
  };
  if (h.bytes <= bytes.capacity()) {  // a buffer that held as much before: read straight into it
    bytes.resize(size_t(h.bytes));
    for (const auto& [at, size] : chunksOf(h.bytes)) chunk(bytes.data() + at, size);
  } else {  // grown only as bytes arrive, never ahead of them by more than a chunk's worth
    bytes = receiveChunked(h.bytes, chunk);
  }
  if (stamp) *stamp = h.stamp;
  if (deliverNs) {
    const int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
    *deliverNs = std::min<int64_t>(h.deliver_ns, now + int64_t(peer_.timeout_s * 1e9));
  }
}

}  // namespace ps

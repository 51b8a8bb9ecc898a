// netdelay: a one-way delay line (and optional random loss) for the test hosts of tools/netns-hosts.sh, on kernels
// without sch_netem. It binds to a netfilter queue (NFQUEUE) and holds every packet the kernel queues there for a
// fixed time before it lets the packet go on, so the packets really arrive that much later and the hosts' TCP
// stacks see the round-trip time a network with that latency would give them. Only verdicts cross into user space
// (the queue copies no packet bytes), and GSO packets are held whole, as netem holds them.
//
//   netdelay --queue N --delay-ms MS [--loss PCT] [--seed S] [--ready FILE]
//
// Packets leave in the order they came, each exactly MS after it was queued (to the scheduler's precision, tens of
// microseconds here). With --loss a packet is dropped with that probability (drawn from --seed, so a run is
// repeatable given the same packets). --ready FILE is written once the queue is bound, so a script can wait for it
// before it sends traffic; on SIGINT or SIGTERM every held packet is let go before the program ends. Counters
// (packets held, dropped, the largest hold, the CPU time this program used, and packets the kernel dropped because it
// fell behind) go to standard error at the end.
// glibc's socket headers first: the kernel's then leave out what glibc already declared.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t stopping = 0;
void onSignal(int) { stopping = 1; }

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "netdelay: %s\n", what.c_str());
  std::exit(2);
}

int64_t nowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

double number(const char* flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno || end == text || *end || !(v >= lo && v <= hi))
    fail(std::string(flag) + " must be a number from " + std::to_string(lo) + " to " + std::to_string(hi) +
         ", not '" + text + "'");
  return v;
}

// One netlink message to the queue subsystem, built attribute by attribute.
class Message {
 public:
  Message(uint16_t type, uint16_t queue, uint16_t flags) {
    nlmsghdr h{};
    h.nlmsg_type = uint16_t((NFNL_SUBSYS_QUEUE << 8) | type);
    h.nlmsg_flags = uint16_t(NLM_F_REQUEST | flags);
    append(&h, sizeof h);
    nfgenmsg g{};
    g.nfgen_family = AF_UNSPEC;
    g.version = NFNETLINK_V0;
    g.res_id = htons(queue);
    append(&g, sizeof g);
  }
  template <class T>
  void attribute(uint16_t type, const T& value, size_t size = sizeof(T)) {
    nlattr a{};
    a.nla_type = type;
    a.nla_len = uint16_t(NLA_HDRLEN + size);
    append(&a, sizeof a);
    append(&value, size);
    bytes_.resize(NLMSG_ALIGN(bytes_.size()), 0);
  }
  const std::vector<char>& finish() {
    reinterpret_cast<nlmsghdr*>(bytes_.data())->nlmsg_len = uint32_t(bytes_.size());
    return bytes_;
  }

 private:
  void append(const void* p, size_t n) {
    const auto* c = static_cast<const char*>(p);
    bytes_.insert(bytes_.end(), c, c + n);
    bytes_.resize(NLMSG_ALIGN(bytes_.size()), 0);
  }
  std::vector<char> bytes_;
};

class Queue {
 public:
  explicit Queue(uint16_t number) : number_(number) {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd_ < 0) fail(std::string("cannot open a netfilter netlink socket: ") + std::strerror(errno));
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
      fail(std::string("cannot bind the netlink socket: ") + std::strerror(errno));
    // Should the socket still overflow, the kernel drops the packets whose notices do not fit (as loss) and says
    // so with ENOBUFS, which is counted and reported.
    const int big = 16 << 20;
    if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);

    Message bind(NFQNL_MSG_CONFIG, number_, NLM_F_ACK);
    nfqnl_msg_config_cmd cmd{};
    cmd.command = NFQNL_CFG_CMD_BIND;
    bind.attribute(NFQA_CFG_CMD, cmd);
    request(bind, "bind to netfilter queue " + std::to_string(number_) +
                      " (is another netdelay bound to it, or is this not root?)");

    Message params(NFQNL_MSG_CONFIG, number_, NLM_F_ACK);
    nfqnl_msg_config_params p{};
    p.copy_range = htonl(0);
    p.copy_mode = NFQNL_COPY_META;  // verdicts only: no packet bytes cross into user space
    params.attribute(NFQA_CFG_PARAMS, p, 5);
    const uint32_t maxlen = htonl(1u << 17);
    params.attribute(NFQA_CFG_QUEUE_MAXLEN, maxlen);
    const uint32_t gso = htonl(NFQA_CFG_F_GSO);  // hold GSO packets whole instead of segmenting them first
    params.attribute(NFQA_CFG_FLAGS, gso);
    params.attribute(NFQA_CFG_MASK, gso);
    request(params, "configure netfilter queue " + std::to_string(number_));
  }
  ~Queue() { ::close(fd_); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  int fd() const { return fd_; }

  // The packet ids the kernel has queued, in arrival order, without blocking; at most `budget` datagrams, so a
  // flood cannot keep held packets from being released.
  template <class F>
  void drain(F&& onPacket, int budget = 256) {
    while (budget-- > 0) {
      const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {
          ++overflows_;
          continue;
        }
        fail(std::string("reading the queue: ") + std::strerror(errno));
      }
      int left = int(n);
      for (auto* h = reinterpret_cast<nlmsghdr*>(buffer_.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
          // A verdict for packets the kernel already let go (an interface went down) is no reason to stop.
          const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
          if (e->error && e->error != -ENOENT) fail(std::string("the queue reported: ") + std::strerror(-e->error));
          continue;
        }
        if ((h->nlmsg_type >> 8) != NFNL_SUBSYS_QUEUE || (h->nlmsg_type & 0xff) != NFQNL_MSG_PACKET) continue;
        int alen = int(h->nlmsg_len) - int(NLMSG_LENGTH(sizeof(nfgenmsg)));
        auto* a = reinterpret_cast<nlattr*>(static_cast<char*>(NLMSG_DATA(h)) + NLMSG_ALIGN(sizeof(nfgenmsg)));
        for (; alen >= int(sizeof(nlattr)) && a->nla_len >= sizeof(nlattr) && a->nla_len <= alen;
             alen -= NLA_ALIGN(a->nla_len), a = reinterpret_cast<nlattr*>(reinterpret_cast<char*>(a) +
                                                                             NLA_ALIGN(a->nla_len))) {
          if ((a->nla_type & NLA_TYPE_MASK) != NFQA_PACKET_HDR ||
              a->nla_len < NLA_HDRLEN + sizeof(nfqnl_msg_packet_hdr))
            continue;
          nfqnl_msg_packet_hdr ph{};
          std::memcpy(&ph, reinterpret_cast<char*>(a) + NLA_HDRLEN, sizeof ph);
          onPacket(ntohl(ph.packet_id));
        }
      }
    }
  }

  // NF_ACCEPT for every packet up to and including `id` that is still held.
  void acceptThrough(uint32_t id) { verdict(NFQNL_MSG_VERDICT_BATCH, NF_ACCEPT, id); }
  void drop(uint32_t id) { verdict(NFQNL_MSG_VERDICT, NF_DROP, id); }
  uint64_t overflows() const { return overflows_; }

 private:
  void verdict(uint16_t type, uint32_t verdict, uint32_t id) {
    Message m(type, number_, 0);
    nfqnl_msg_verdict_hdr v{};
    v.verdict = htonl(verdict);
    v.id = htonl(id);
    m.attribute(NFQA_VERDICT_HDR, v);
    const auto& bytes = m.finish();
    while (::send(fd_, bytes.data(), bytes.size(), 0) < 0)
      if (errno != EINTR) fail(std::string("sending a verdict: ") + std::strerror(errno));
  }

  // Sends a configuration message and waits for its acknowledgement (packet notices that come first stay queued
  // in the kernel: the first batch verdict covers them).
  void request(Message& m, const std::string& what) {
    const auto& bytes = m.finish();
    if (::send(fd_, bytes.data(), bytes.size(), 0) < 0) fail("cannot " + what + ": " + std::strerror(errno));
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot " + what + ": " + std::strerror(errno));
      const auto* h = reinterpret_cast<const nlmsghdr*>(buffer_.data());
      if (!NLMSG_OK(h, int(n))) fail("cannot " + what + ": a malformed answer");
      if (h->nlmsg_type != NLMSG_ERROR) continue;
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (e->error) fail("cannot " + what + ": " + std::strerror(-e->error));
      return;
    }
  }

  uint16_t number_;
  int fd_ = -1;
  uint64_t overflows_ = 0;
  std::vector<char> buffer_ = std::vector<char>(1 << 16);
};

struct Held {
  uint32_t id;
  int64_t due;
};

}  // namespace

int main(int argc, char** argv) {
  int queue = -1;
  double delayMs = -1, lossPct = 0;
  uint64_t seed = 1;
  std::string ready;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) fail("usage: netdelay --queue N --delay-ms MS [--loss PCT] [--seed S] [--ready FILE]");
    const char* v = argv[++i];
    if (a == "--queue")
      queue = int(number("--queue", v, 0, 65535));
    else if (a == "--delay-ms")
      delayMs = number("--delay-ms", v, 0, 10000);
    else if (a == "--loss")
      lossPct = number("--loss", v, 0, 100);
    else if (a == "--seed")
      seed = uint64_t(number("--seed", v, 0, 9007199254740992.0));
    else if (a == "--ready")
      ready = v;
    else
      fail("unknown argument '" + a + "' (--queue, --delay-ms, --loss, --seed, --ready)");
  }
  if (queue < 0 || delayMs < 0) fail("--queue and --delay-ms are required");

  // The signals are blocked except inside ppoll, so one that comes between the check of `stopping` and the wait
  // ends the wait at once instead of after it.
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  sigset_t blocked, waiting;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &blocked, &waiting);
  sigdelset(&waiting, SIGINT);
  sigdelset(&waiting, SIGTERM);

  Queue q{uint16_t(queue)};
  if (!ready.empty() && !(std::ofstream(ready) << ::getpid() << "\n")) fail("cannot write " + ready);

  const auto delay = int64_t(delayMs * 1e6);
  std::mt19937_64 random(seed);
  std::bernoulli_distribution lost(lossPct / 100);
  std::deque<Held> held;
  uint64_t passed = 0, dropped = 0;
  int64_t longest = 0;
  auto receive = [&](uint32_t id) {
    if (lossPct > 0 && lost(random)) {
      q.drop(id);
      ++dropped;
    } else {
      held.push_back({id, nowNs() + delay});
    }
  };
  auto release = [&](int64_t now) {  // one batch verdict for every packet whose time has come
    uint32_t last = 0;
    bool any = false;
    while (!held.empty() && held.front().due <= now) {
      longest = std::max(longest, now - (held.front().due - delay));
      last = held.front().id;
      any = true;
      held.pop_front();
      ++passed;
    }
    if (any) q.acceptThrough(last);
  };
  while (!stopping) {
    const int64_t now = nowNs();
    release(now);
    timespec wait{1, 0};  // nothing held: a packet or a signal ends the wait
    if (!held.empty()) {
      const int64_t ns = std::max<int64_t>(0, held.front().due - now);
      wait = {time_t(ns / 1000000000), long(ns % 1000000000)};
    }
    pollfd p{q.fd(), POLLIN, 0};
    const int r = ::ppoll(&p, 1, &wait, &waiting);
    if (r < 0 && errno != EINTR) fail(std::string("waiting for packets: ") + std::strerror(errno));
    if (r > 0) q.drain(receive);
  }
  q.drain(receive, 1 << 20);  // notices still unread, then every held packet goes: nothing is left in the kernel
  if (!held.empty()) q.acceptThrough(held.back().id);
  rusage used{};
  ::getrusage(RUSAGE_SELF, &used);
  const double cpu = double(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
                     1e-6 * double(used.ru_utime.tv_usec + used.ru_stime.tv_usec);
  std::fprintf(
      stderr,
      "netdelay: queue %d: %llu packets delayed %.3f ms (longest hold %.3f ms), %llu dropped, %.3f s of CPU%s\n", queue,
      static_cast<unsigned long long>(passed + held.size()), delayMs, longest / 1e6,
      static_cast<unsigned long long>(dropped), cpu,
      q.overflows() ? "; the kernel dropped packets this program could not take in time" : "");
  return 0;
}

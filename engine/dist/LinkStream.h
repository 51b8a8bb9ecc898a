#pragma once
// One direction of a pipeline link between two ranks, over a TCP connection of its own. A payload streams as soon as
// the sender sends it, while the receiver is still computing, and arrives a latency plus its transfer time later:
// what the link model assumes. Gloo's point-to-point messages do not behave so: Gloo moves a message only once the
// receiver has posted a matching receive, so each message costs extra round trips (its header and its body are two
// messages) and its transfer waits for the receiver instead of overlapping its compute (docs/link-model.md has the
// measurements).
//
// Messages are framed as every point-to-point message is (engine/dist/Framing.h): the 32-byte header, checked as
// untrusted before anything is allocated, then the body, read as it arrives. The receiving end listens on the rank's
// bind address (any free port) and publishes where through the run's rendezvous store; the sending end connects from
// its own bind address and presents the link's name and the run's store token, and a connection that does not is
// closed without an answer.
// Torch-free.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ps {

class LinkStream {
 public:
  // Publishes (publish = true) or fetches the receiving end's address under `key`: Cluster::share.
  using Share = std::function<std::vector<uint8_t>(const std::string& key, bool publish,
                                                   const std::vector<uint8_t>& mine)>;
  struct Peer {
    std::string self, other;  // "rank 1 (stage 1, replica 0)", for the errors this end throws
    std::string token;        // the run's store token (may be empty)
    double timeout_s = 120;   // parallel.timeout_s: silence longer than this fails the run
  };

  // The receiving end: listens and publishes its address under `key` at once (it never waits for the sender, so
  // every rank can make its receiving ends before its sending ends without waiting on another rank); takes the
  // sender's connection when the first message is asked for.
  static std::unique_ptr<LinkStream> receiving(const std::string& bindAddress, const std::string& key, Peer peer,
                                               const Share& share);
  // The sending end: waits for the receiving end's address under `key` (at most timeout_s) and connects to it from
  // `bindAddress`.
  static std::unique_ptr<LinkStream> sending(const std::string& bindAddress, const std::string& key, Peer peer,
                                             const Share& share);
  ~LinkStream();
  LinkStream(const LinkStream&) = delete;
  LinkStream& operator=(const LinkStream&) = delete;

  // Sending end: queues the message and returns at once; the stream's writer thread writes it, and fails when the
  // peer closes or takes nothing for timeout_s. Throws ClusterError when an earlier write failed.
  void send(std::vector<uint8_t> bytes, double stamp, int64_t deliverNs);
  // The same for bytes sent down several streams at once: kept, not copied, until written.
  void send(std::shared_ptr<const std::vector<uint8_t>> bytes, double stamp, int64_t deliverNs);
  // Sending end: returns once every queued message is in the kernel's hands; throws ClusterError for a failed write.
  void flush();
  // Receiving end: the next message. A header announcing more than `limit` bytes, a peer that closes or sends
  // nothing for timeout_s (waiting for the header, or within one 16 MiB chunk of the body), or a foreign header is a
  // ClusterError naming the peer. `deliverNs` comes back capped at now + timeout_s, so a peer cannot stall this rank
  // past it.
  std::vector<uint8_t> receive(uint64_t limit, double* stamp, int64_t* deliverNs);
  // The same into `bytes`, whose memory is reused where it is large enough (a buffer received into every step).
  void receiveInto(std::vector<uint8_t>& bytes, uint64_t limit, double* stamp, int64_t* deliverNs);

  // Receiving end: takes the sender's connection now rather than at the first receive (at most timeout_s; a
  // ClusterError says the sender never connected). Nothing happens when it is already taken.
  void accept();

  int port() const { return port_; }  // the receiving end's listening port (tests)

 private:
  LinkStream(std::string key, Peer peer) : key_(std::move(key)), peer_(std::move(peer)) {}
  void writeLoop();
  // Whether the connection `fd` presents this link's hello, name and the run's token by `deadline`.
  bool introduces(int fd, std::chrono::steady_clock::time_point deadline) const;
  // Logs (naming who connected and why) and closes a connection that is not the peer's.
  void ignore(int fd, const char* why) const;

  struct Outgoing {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    double stamp;
    int64_t deliverNs;
  };

  std::string key_;
  Peer peer_;
  int listenFd_ = -1, fd_ = -1, port_ = 0;
  // The writer thread and what it owes.
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Outgoing> queue_;
  bool writing_ = false, stopping_ = false;
  std::string error_;
};

}  // namespace ps

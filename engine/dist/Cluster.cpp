#include "engine/dist/Cluster.h"

#include "engine/dist/ControlStar.h"
#include "engine/dist/Framing.h"
#include "engine/dist/GlooCheck.h"
#include "engine/dist/HostNetwork.h"
#include "engine/dist/RendezvousStore.h"
#include "engine/dist/ReplicaMesh.h"
#include "engine/errors/ConfigError.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace ps {
namespace {

using std::chrono::milliseconds;

at::Tensor bytesTensor(void* data, int64_t n) {
  return torch::from_blob(data, {n}, torch::TensorOptions().dtype(torch::kUInt8));
}

}  // namespace

struct Cluster::Impl {
  // Members are destroyed bottom up: the process groups go first, while the rendezvous server (rank 0's) and the
  // buffers of pending sends, which Gloo may still be reading, are still there.
  std::unique_ptr<KeyValueServer> server;
  struct Pending {
    int peer = 0;
    WireHeader header;
    std::vector<uint8_t> bytes;
    c10::intrusive_ptr<c10d::Work> head;
    std::vector<c10::intrusive_ptr<c10d::Work>> body;  // one per chunk (engine/dist/Framing.h)
  };
  std::mutex sendsMutex;
  std::vector<std::unique_ptr<Pending>> sends;

  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> p2p;
  std::unique_ptr<ControlStar> control;   // collectives among all ranks (commands, step reports)
  std::unique_ptr<ReplicaMesh> replicas;  // collectives among this stage's replicas (the gradient exchange)
  milliseconds timeout{0};
  std::string token;  // the run's (ClusterOptions::token): Gloo groups are checked with words derived from it

  // Liveness: a second store client, so beats never wait behind the session's store calls.
  std::thread heartbeat;
  std::mutex beatMutex;
  std::condition_variable beatWake;
  bool stopping = false;

  // A Gloo group of `n` ranks (this one is `r`) under store keys below `prefix`, formed again until every rank's
  // formed; `among` names the group in messages, `self` this rank.
  c10::intrusive_ptr<c10d::ProcessGroupGloo> glooGroup(const std::string& prefix, int r, int n,
                                                       const std::string& among, const std::string& self,
                                                       const std::string& bind);

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(beatMutex);
      stopping = true;
    }
    beatWake.notify_all();
    if (heartbeat.joinable()) heartbeat.join();
  }
};

// A Gloo listener takes the first connection that comes, so another process connecting to one before the rank it
// waits for has the rank's own connection refused: the group fails to form on one side and forms around the stranger
// on the other. Every rank therefore checks that its group answers with the run's own ranks (engine/dist/GlooCheck.h)
// and says, through the control star, whether it formed and answered; unless all did, all of them drop it and form it
// again under fresh store keys, until the run's timeout.
c10::intrusive_ptr<c10d::ProcessGroupGloo> Cluster::Impl::glooGroup(const std::string& prefix, int r, int n,
                                                                    const std::string& among, const std::string& self,
                                                                    const std::string& bind) {
  auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
  gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(bind));
  gloo->threads = 1;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 1;; ++attempt) {
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
    std::string failure;
    try {
      group = c10::make_intrusive<c10d::ProcessGroupGloo>(
          c10::make_intrusive<c10d::PrefixStore>(prefix + "/" + std::to_string(attempt), store), r, n, gloo);
    } catch (const std::exception& e) {
      failure = e.what();
      failure = failure.substr(0, failure.find('\n'));
    }
    if (group) {  // formed on this side: is every peer the run's own rank? (engine/dist/GlooCheck.h)
      const auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
      const auto wait = std::clamp(milliseconds(1000 * attempt), milliseconds(100), std::max(left, milliseconds(100)));
      if (!glooGroupAnswers(*group, r, n, token, attempt, wait, &failure)) group.reset();
    }
    const auto votes = control->allGather({uint8_t(failure.empty() ? 1 : 0)}, 1);
    const bool all =
        std::all_of(votes.begin(), votes.end(), [](const auto& v) { return v == std::vector<uint8_t>{1}; });
    if (all) return group;
    if (std::chrono::steady_clock::now() >= until)
      throw ClusterError("Gloo among " + among + " did not connect within " + std::to_string(timeout.count() / 1000) +
                         " s (parallel.timeout_s)" + (failure.empty() ? "" : ": " + failure));
    std::fprintf(stderr,
                 "%s: Gloo among %s did not form (%s), as when a connection from another process takes one of its "
                 "listeners; forming it again (attempt %d)\n",
                 self.c_str(), among.c_str(), failure.empty() ? "on another rank" : failure.c_str(), attempt + 1);
  }
}

Cluster::Cluster(const ClusterOptions& options, int stages, int replicas)
    : options_(options), stages_(stages), replicas_(replicas), impl_(std::make_unique<Impl>()) {
  if (options_.world != stages * replicas)
    throw ConfigError("WORLD_SIZE = " + std::to_string(options_.world) + " but the run has pipeline.stages = " +
                      std::to_string(stages) + " x parallel.replicas = " + std::to_string(replicas) + " = " +
                      std::to_string(stages * replicas) + " workers; start one process per stage and replica");
  impl_->timeout = milliseconds(int64_t(options_.timeout_s * 1000));
  impl_->token = options_.token;
  // Refused before anything connects: an address that is not this machine's could never be listened on.
  const std::string local = ps::bindAddress(options_.bind, options_.bind_source, options_.master_addr);
  bindAddress_ = local;
  const std::string where = options_.master_addr + ":" + std::to_string(options_.master_port);
  try {
    // Rank 0 keeps the store, listening on MASTER_ADDR only (loopback for a run on one machine); two connections
    // per rank, and room for ranks that reconnect.
    if (options_.rank == 0)
      impl_->server = std::make_unique<KeyValueServer>(options_.master_addr, options_.master_port, options_.token,
                                                       size_t(4 * options_.world + 16));
    impl_->store = c10::make_intrusive<RendezvousStore>(options_.master_addr, options_.master_port, options_.token,
                                                        impl_->timeout);
  } catch (const std::exception& e) {
    throw ClusterError(describe(rank()) + ": rendezvous at " + where + " failed (" + e.what() +
                       "); check MASTER_ADDR/MASTER_PORT and that all " + std::to_string(options_.world) +
                       " ranks were started");
  }
  try {
    auto beatStore = c10::static_intrusive_pointer_cast<RendezvousStore>(impl_->store)->clone();
    impl_->heartbeat = std::thread([impl = impl_.get(), beatStore, key = "beat/" + std::to_string(rank())] {
      std::unique_lock<std::mutex> lock(impl->beatMutex);
      while (!impl->stopping) {
        try {
          beatStore->add(key, 1);
        } catch (...) {  // rank 0 (the store) is gone: the run is failing anyway
          return;
        }
        impl->beatWake.wait_for(lock, std::chrono::milliseconds(500));
      }
    });
    // The control star first: its listening ends take only connections that present the run's token, so it is what
    // the ranks agree through while they connect Gloo, whose listeners take whatever connects first.
    impl_->control = std::make_unique<ControlStar>(
        rank(), world(), local, options_.token, options_.timeout_s, [this](int r) { return describe(r); },
        [this](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
          return share(key, publish, mine, "all ranks");
        });
    // Where rank 0's clock stands against this rank's, for laying every rank's wall-clock timeline on one clock.
    const ClockOffset clock = impl_->control->clockOffset(8, [] {
      return int64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
              .count());
    });
    clockOffsetNs_ = clock.offset_ns;
    if (replicas_ > 1)
      impl_->replicas = std::make_unique<ReplicaMesh>(
          replica(), replicas_, "replicas/stage" + std::to_string(stage()), local, options_.token, options_.timeout_s,
          [this](int i) { return describe(rankOf(stage(), i)); },
          [this](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
            return share(key, publish, mine, "the replicas of stage " + std::to_string(stage()));
          });
  } catch (const std::exception& e) {
    // The address was checked above (a --bind that is not this machine's is refused before anything connects): what
    // fails here is a peer that never came, stopped, or was cut off.
    throw ClusterError(describe(rank()) + ": connecting to the other ranks through " + where + " from " + local +
                       " failed (" + e.what() + "); check that all " + std::to_string(options_.world) +
                       " ranks were started and are still running, and retry");
  }
}

void Cluster::openPointToPoint() {
  if (impl_->p2p) return;
  try {
    impl_->p2p = impl_->glooGroup("p2p", rank(), world(), "all ranks", describe(rank()), bindAddress_);
  } catch (const std::exception& e) {
    throw ClusterError(describe(rank()) + ": connecting the ranks' point-to-point links through Gloo failed (" +
                       e.what() + "); check that all " + std::to_string(world()) + " ranks are still running");
  }
}

// Sends still pending here belong to a step that failed: they are dropped, not waited for (their peer may be gone).
Cluster::~Cluster() = default;

std::string Cluster::describe(int r) const {
  return "rank " + std::to_string(r) + " (stage " + std::to_string(r % stages_) + ", replica " +
         std::to_string(r / stages_) + ")";
}

void Cluster::send(int peer, int tag, std::vector<uint8_t> bytes, double stamp, int64_t deliverNs) {
  auto p = std::make_unique<Impl::Pending>();
  p->peer = peer;
  p->header.bytes = bytes.size();
  p->header.stamp = stamp;
  p->header.deliver_ns = deliverNs;
  p->bytes = std::move(bytes);
  if (!impl_->p2p) throw std::logic_error("Cluster::send before openPointToPoint()");
  try {
    std::vector<at::Tensor> head{bytesTensor(&p->header, sizeof(WireHeader))};
    p->head = impl_->p2p->send(head, peer, 2 * tag);
    for (const auto& [at, size] : chunksOf(p->bytes.size())) {
      std::vector<at::Tensor> chunk{bytesTensor(p->bytes.data() + at, int64_t(size))};
      p->body.push_back(impl_->p2p->send(chunk, peer, 2 * tag + 1));
    }
  } catch (const std::exception& e) {
    throw ClusterError("sending to " + describe(peer) + " failed: " + e.what());
  }
  std::lock_guard<std::mutex> lock(impl_->sendsMutex);  // kept until flushSends(): Gloo completes a send on wait()
  impl_->sends.push_back(std::move(p));
}

std::vector<uint8_t> Cluster::receive(int peer, int tag, double* stamp, int64_t* deliverNs, uint64_t limit) {
  // wait() without an argument: the group's own timeout (parallel.timeout_s) ends the work itself, so Gloo never
  // writes into a buffer this function has already given up on.
  auto fail = [&](const std::exception& e) -> ClusterError {
    const std::string what = e.what();
    if (glooTimedOut(what))
      return ClusterError(describe(peer) + " sent nothing for " + std::to_string(int(options_.timeout_s)) +
                          " s (parallel.timeout_s): it hangs or stopped; seen by " + describe(rank()));
    return ClusterError(describe(peer) + " closed its connection (it stopped or crashed); seen by " +
                        describe(rank()) + ": " + what.substr(0, what.find('\n')));
  };
  WireHeader h;
  if (!impl_->p2p) throw std::logic_error("Cluster::receive before openPointToPoint()");
  try {
    std::vector<at::Tensor> head{bytesTensor(&h, sizeof h)};
    impl_->p2p->recv(head, peer, 2 * tag)->wait();
  } catch (const std::exception& e) {
    throw fail(e);
  }
  try {
    checkHeader(h, std::min(limit, kMaxMessageBytes));
  } catch (const FrameError& e) {
    throw ClusterError(describe(peer) + " sent " + e.what());
  }
  std::vector<uint8_t> bytes;
  try {
    bytes = receiveChunked(h.bytes, [&](uint8_t* into, size_t size) {
      std::vector<at::Tensor> chunk{bytesTensor(into, int64_t(size))};
      impl_->p2p->recv(chunk, peer, 2 * tag + 1)->wait();
    });
  } catch (const std::exception& e) {
    throw fail(e);
  }
  if (stamp) *stamp = h.stamp;
  if (deliverNs) {  // never later than the timeout: a peer cannot stall this rank past it
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count();
    *deliverNs = std::min<int64_t>(h.deliver_ns, now + int64_t(options_.timeout_s * 1e9));
  }
  return bytes;
}

void Cluster::flushSends() {
  std::vector<std::unique_ptr<Impl::Pending>> sends;
  {
    std::lock_guard<std::mutex> lock(impl_->sendsMutex);
    sends.swap(impl_->sends);
  }
  for (auto& s : sends) {
    try {
      s->head->wait();
      for (auto& chunk : s->body) chunk->wait();
    } catch (const std::exception& e) {
      const std::string what = e.what();
      throw ClusterError(describe(s->peer) +
                         (glooTimedOut(what) ? " took nothing for " + std::to_string(int(options_.timeout_s)) +
                                                   " s (parallel.timeout_s): it hangs or stopped"
                                             : " closed its connection (it stopped or crashed)") +
                         "; seen by " + describe(rank()));
    }
  }
}

std::vector<std::vector<uint8_t>> Cluster::allGatherReplicas(const std::vector<uint8_t>& mine, uint64_t limit) {
  if (!impl_->replicas) return {mine};
  return impl_->replicas->allGather(mine, std::min(limit, kMaxMessageBytes));
}

std::vector<uint8_t> Cluster::shareAmongReplicas(const std::string& key, const std::vector<uint8_t>& mine) {
  return share("stage" + std::to_string(stage()) + "/" + key, replica() == 0, mine,
               "the replicas of stage " + std::to_string(stage()));
}

std::vector<uint8_t> Cluster::share(const std::string& key, bool publish, const std::vector<uint8_t>& mine,
                                    const std::string& among) {
  const std::string k = "share/" + key;
  try {
    if (publish) impl_->store->set(k, mine);
    return impl_->store->get(k);  // waits for the publisher, at most the store's timeout
  } catch (const std::exception& e) {
    throw ClusterError("sharing " + key + " among " + among + " failed: " + e.what());
  }
}

std::vector<std::vector<uint8_t>> Cluster::allGatherWorld(const std::vector<uint8_t>& mine, uint64_t limit) {
  return impl_->control->allGather(mine, std::min(limit, kMaxMessageBytes));
}

void Cluster::allReduceReplicas(float* data, int64_t n) {
  if (!impl_->replicas || n == 0) return;
  impl_->replicas->allReduce(data, n);
}

std::vector<uint8_t> Cluster::broadcastWorld(std::vector<uint8_t> bytes) {
  return impl_->control->broadcast(std::move(bytes), kMaxControlBytes);
}

void Cluster::reportFault(const std::string& what) noexcept {
  try {
    const std::string text = describe(rank()) + ": " + what;
    impl_->store->set("fault/" + std::to_string(rank()), std::vector<uint8_t>(text.begin(), text.end()));
  } catch (...) {  // the store lives in rank 0's process, which may be gone
  }
}

std::vector<std::string> Cluster::faults(double waitSeconds) noexcept {
  std::vector<std::string> out;
  try {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(waitSeconds);
    std::vector<bool> seen(size_t(world()), false);
    auto lastNew = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < until) {
      for (int r = 0; r < world(); ++r) {
        if (r == rank()) continue;
        const std::string key = "fault/" + std::to_string(r);
        if (seen[size_t(r)] || !impl_->store->check({key})) continue;  // reports are short texts
        auto v = impl_->store->get(key);
        out.emplace_back(v.begin(), v.end());
        seen[size_t(r)] = true;
        lastNew = std::chrono::steady_clock::now();
      }
      // Done once every other rank reported or the reports stopped coming.
      if (int(out.size()) >= world() - 1 || (!out.empty() && std::chrono::steady_clock::now() - lastNew >
                                                                 std::chrono::milliseconds(700)))
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } catch (...) {
  }
  return out;
}

std::vector<int> Cluster::silentRanks(double seconds) noexcept {
  std::vector<int> silent;
  try {
    std::vector<int64_t> before;
    for (int r = 0; r < world(); ++r) before.push_back(impl_->store->add("beat/" + std::to_string(r), 0));
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    for (int r = 0; r < world(); ++r)
      if (r != rank() && impl_->store->add("beat/" + std::to_string(r), 0) == before[size_t(r)]) silent.push_back(r);
  } catch (...) {
  }
  return silent;
}

}  // namespace ps

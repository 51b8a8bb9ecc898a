#include "engine/dist/RendezvousStore.h"

#include <algorithm>
#include <thread>

namespace ps {

RendezvousStore::RendezvousStore(const std::string& address, int port, const std::string& token,
                                 std::chrono::milliseconds timeout)
    : c10d::Store(timeout), client_(address, port, token, timeout) {}

void RendezvousStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  client_.set(key, value);
}

std::vector<uint8_t> RendezvousStore::compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                                 const std::vector<uint8_t>& desired) {
  return client_.compareSet(key, expected, desired);
}

std::vector<uint8_t> RendezvousStore::get(const std::string& key) {
  wait({key}, timeout_);
  if (auto v = client_.get(key)) return std::move(*v);
  throw RendezvousError("the key '" + key + "' left the rendezvous store while this rank waited for it");
}

int64_t RendezvousStore::add(const std::string& key, int64_t value) {
  return client_.add(key, value);
}

bool RendezvousStore::deleteKey(const std::string& key) {
  return client_.erase(key);
}

bool RendezvousStore::check(const std::vector<std::string>& keys) {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return client_.check(k); });
}

int64_t RendezvousStore::getNumKeys() {
  return client_.numKeys();
}

void RendezvousStore::wait(const std::vector<std::string>& keys) {
  wait(keys, timeout_);
}

void RendezvousStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout == kNoTimeout ? Clock::time_point::max() : Clock::now() + timeout;
  auto pause = std::chrono::microseconds(500);
  for (const auto& key : keys) {
    while (!client_.check(key)) {
      if (Clock::now() >= deadline)
        throw RendezvousError("timed out after " + std::to_string(timeout.count()) + " ms waiting for '" + key +
                              "' in the rendezvous store: another rank did not arrive");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
  }
}

c10::intrusive_ptr<c10d::Store> RendezvousStore::clone() {
  return c10::make_intrusive<RendezvousStore>(client_.address(), client_.port(), client_.token(), client_.timeout());
}

}  // namespace ps

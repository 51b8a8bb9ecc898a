#pragma once
// c10d::Store over the lab's own key-value store (engine/dist/KeyValueStore.h), so the process groups rendezvous
// through a listener bound to one address instead of c10d's TCPStore, which listens on every interface.
// get() and wait() poll until the key is there or the store's timeout passes (rendezvous keys are few and small).
#include "engine/dist/KeyValueStore.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace ps {

class RendezvousStore : public c10d::Store {
 public:
  RendezvousStore(const std::string& address, int port, const std::string& token, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // A second connection to the same store (newer LibTorch declares this on c10d::Store; this one does not).
  c10::intrusive_ptr<c10d::Store> clone();

 private:
  KeyValueClient client_;
};

}  // namespace ps

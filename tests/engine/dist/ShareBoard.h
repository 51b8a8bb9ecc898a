#pragma once
// The rendezvous store's share() in memory, for tests of what connects through it: a fetch waits for the publisher.
#include "engine/dist/LinkStream.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ps {

struct Board {
  std::mutex mutex;
  std::condition_variable published;
  std::map<std::string, std::vector<uint8_t>> values;
  LinkStream::Share share() {
    return [this](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
      std::unique_lock<std::mutex> lock(mutex);
      if (publish) {
        values[key] = mine;
        published.notify_all();
      }
      published.wait(lock, [&] { return values.count(key) > 0; });
      return values[key];
    };
  }
};

}  // namespace ps

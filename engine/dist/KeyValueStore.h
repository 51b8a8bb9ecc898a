#pragma once
// The rendezvous store of a multi-process run: a small key-value server in rank 0's process and a client per rank.
//
// c10d's TCPStore of this LibTorch listens on every interface and takes writes from anyone who reaches its port. This
// server listens on exactly the address it is given (loopback for a run on one machine, the address the user names
// for several) and, when the run has a token, answers only connections that present it first. Every request is
// untrusted: sizes are checked before anything is allocated, and a connection that breaks the protocol is closed.
// Torch-free: engine/dist/RendezvousStore.h adapts the client to c10d::Store for the process groups.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

// The store could not be reached, closed the connection, refused a request or did not answer in time.
class RendezvousError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace store {

enum class Op : uint8_t { Hello = 1, Set, Get, Add, Check, Delete, NumKeys, CompareSet };
enum class Status : uint8_t { Ok = 0, Missing = 1, Refused = 2 };

constexpr uint32_t kMaxKeyBytes = 4096;
constexpr uint32_t kMaxValueBytes = uint32_t(64) << 20;    // one value (step reports travel on the process groups)
constexpr uint64_t kMaxStoredBytes = uint64_t(256) << 20;  // all values together
constexpr size_t kMaxKeys = size_t(1) << 16;
constexpr size_t kRequestHeaderBytes = 9;  // op (1), key length (4), value length (4), little-endian

struct RequestHeader {
  Op op = Op::Get;
  uint32_t keyBytes = 0, valueBytes = 0;
};

// Little-endian encodings of the wire format.
void putU32(uint8_t* p, uint32_t v);
uint32_t getU32(const uint8_t* p);
std::vector<uint8_t> int64Bytes(int64_t v);
int64_t bytesInt64(const std::vector<uint8_t>& b);  // throws RendezvousError unless 8 bytes

// Parses and checks a request header (a known operation, sizes within the limits). Throws RendezvousError naming what
// is wrong. Pure, so the fuzzer reaches it.
RequestHeader parseRequestHeader(const uint8_t* bytes, size_t size);

}  // namespace store

class KeyValueServer {
 public:
  // Listens on `address` (a numeric address or a host name that resolves to one of this machine's) and `port`
  // (0: any free port, see port()). Connections must send `token` first when it is not empty. At most
  // `maxConnections` at once. Throws RendezvousError when the address cannot be bound.
  KeyValueServer(const std::string& address, int port, std::string token, size_t maxConnections = 256);
  ~KeyValueServer();  // closes every connection and waits for its threads
  KeyValueServer(const KeyValueServer&) = delete;
  KeyValueServer& operator=(const KeyValueServer&) = delete;

  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One connection to the server. Calls are serialised; each waits at most `timeout` for its answer.
class KeyValueClient {
 public:
  // Connects, retrying until `timeout` (the server may not be up yet), and presents `token` when not empty.
  KeyValueClient(const std::string& address, int port, std::string token, std::chrono::milliseconds timeout);
  ~KeyValueClient();
  KeyValueClient(const KeyValueClient&) = delete;
  KeyValueClient& operator=(const KeyValueClient&) = delete;

  void set(const std::string& key, const std::vector<uint8_t>& value);
  std::optional<std::vector<uint8_t>> get(const std::string& key);  // nullopt when the key is not there
  int64_t add(const std::string& key, int64_t delta);               // counters are stored as decimal text
  bool check(const std::string& key);
  bool erase(const std::string& key);
  int64_t numKeys();
  // Sets `desired` when the value is `expected` (or the key is missing and `expected` is empty); returns the value now.
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired);

  const std::string& address() const { return address_; }
  int port() const { return port_; }
  const std::string& token() const { return token_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::pair<store::Status, std::vector<uint8_t>> call(store::Op op, const std::string& key,
                                                      const std::vector<uint8_t>& value);
  std::string where() const;

  std::string address_;
  int port_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  int fd_ = -1;
};

// A free TCP port on the loopback interface (for a launcher's rendezvous).
int freeLoopbackPort();
// A random token for a run's rendezvous store: 32 hexadecimal digits from the kernel's random source.
std::string newStoreToken();

}  // namespace ps

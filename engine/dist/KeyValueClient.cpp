#include "engine/dist/KeyValueStore.h"
#include "engine/dist/Sockets.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace ps {

using namespace store;
using namespace net;

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
      throw RendezvousError("timed out after " + std::to_string(timeout_.count()) +
                            " ms connecting to the rendezvous store at " + where() + " (" + why +
                            "); check MASTER_ADDR/MASTER_PORT and that rank 0 runs");
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

std::string KeyValueClient::where() const {
  return address_ + ":" + std::to_string(port_);
}

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
  // A connection that failed mid-request is out of step with the server: it is closed for good.
  auto broken = [&](const std::string& what) {
    ::close(fd_);
    fd_ = -1;
    return RendezvousError("the rendezvous store at " + where() + " " + what);
  };
  uint8_t head[5];
  const bool sent = writeExact(fd_, out.data(), out.size(), deadline);
  if (!sent || !readExact(fd_, head, sizeof head, deadline))
    throw broken(Clock::now() >= deadline ? "timed out (no answer within " + std::to_string(timeout_.count()) + " ms)"
                                          : std::string("closed the connection (rank 0 stopped)"));
  const uint32_t size = getU32(head + 1);
  if (head[0] > uint8_t(Status::Refused) || size > kMaxValueBytes + 4096u) throw broken("sent a malformed answer");
  std::vector<uint8_t> body(size);
  if (!readExact(fd_, body.data(), body.size(), deadline)) throw broken("broke off an answer");
  if (Status(head[0]) == Status::Refused)
    throw RendezvousError("the rendezvous store refused a request: " + std::string(body.begin(), body.end()));
  return {Status(head[0]), std::move(body)};
}

void KeyValueClient::set(const std::string& key, const std::vector<uint8_t>& value) {
  call(Op::Set, key, value);
}

std::optional<std::vector<uint8_t>> KeyValueClient::get(const std::string& key) {
  auto answer = call(Op::Get, key, {});
  if (answer.first == Status::Missing) return std::nullopt;
  return std::move(answer.second);
}

int64_t KeyValueClient::add(const std::string& key, int64_t delta) {
  return bytesInt64(call(Op::Add, key, int64Bytes(delta)).second);
}

bool KeyValueClient::check(const std::string& key) {
  return call(Op::Check, key, {}).first == Status::Ok;
}

bool KeyValueClient::erase(const std::string& key) {
  return call(Op::Delete, key, {}).first == Status::Ok;
}

int64_t KeyValueClient::numKeys() {
  return bytesInt64(call(Op::NumKeys, "", {}).second);
}

std::vector<uint8_t> KeyValueClient::compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                                const std::vector<uint8_t>& desired) {
  std::vector<uint8_t> v(4 + expected.size() + desired.size());
  putU32(v.data(), uint32_t(expected.size()));
  std::copy(expected.begin(), expected.end(), v.begin() + 4);
  std::copy(desired.begin(), desired.end(), v.begin() + 4 + std::ptrdiff_t(expected.size()));
  return call(Op::CompareSet, key, v).second;
}

}  // namespace ps

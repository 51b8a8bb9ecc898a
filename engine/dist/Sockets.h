#pragma once
// Blocking TCP helpers with deadlines, for the rendezvous store's server and client (torch-free).
#include <netdb.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ps::net {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is readable (POLLIN) or writable (POLLOUT), at most until `deadline` (none: time_point::max()).
bool waitFor(int fd, short events, Clock::time_point deadline);
// Reads or writes exactly n bytes. False when the peer closed, an error occurred or the deadline passed.
bool readExact(int fd, uint8_t* data, size_t n, Clock::time_point deadline);
bool writeExact(int fd, const uint8_t* data, size_t n, Clock::time_point deadline);
void noDelay(int fd);
// Compares without stopping at the first difference, so the time taken says nothing about the token.
bool sameSecret(const std::string& a, const std::vector<uint8_t>& b);

// The stream addresses of host:port. Throws RendezvousError naming the host when it does not resolve.
struct AddressList {
  addrinfo* head = nullptr;
  AddressList(const std::string& host, int port);
  ~AddressList();
  AddressList(const AddressList&) = delete;
  AddressList& operator=(const AddressList&) = delete;
};

}  // namespace ps::net

#include "engine/dist/HostNetwork.h"

#include "engine/errors/ConfigError.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <memory>

namespace ps {
namespace {

std::string numeric(const sockaddr* a) {
  char host[NI_MAXHOST] = {};
  const socklen_t len = a->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (getnameinfo(a, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return {};
  std::string s = host;
  return s.substr(0, s.find('%'));  // an IPv6 link-local scope
}

std::string listed(const std::vector<LocalAddress>& all) {
  std::string out;
  for (const auto& a : all) out += (out.empty() ? "" : ", ") + a.address + " (" + a.interface + ")";
  return out.empty() ? "none found" : out;
}

bool isLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// The local address a datagram to `host` would leave from (no packet is sent: connect() on UDP only routes).
std::string routeTo(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found)
    throw ConfigError("the master address '" + host +
                      "' does not resolve; set MASTER_ADDR (or --master-addr) to "
                      "rank 0's host, or name the local address or interface to use with --bind");
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> hold(found, freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  std::string local;
  if (fd >= 0) {
    sockaddr_storage me{};
    socklen_t len = sizeof me;
    if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0)
      local = numeric(reinterpret_cast<sockaddr*>(&me));
    ::close(fd);
  }
  if (local.empty())
    throw ConfigError("no route from this machine to the master address '" + host +
                      "'; name the local address or interface to use with --bind");
  return local;
}

}  // namespace

std::vector<LocalAddress> localAddresses() {
  std::vector<LocalAddress> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    if (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6) continue;
    const std::string a = numeric(i->ifa_addr);
    if (!a.empty()) out.push_back({i->ifa_name, a});
  }
  freeifaddrs(list);
  return out;
}

std::string bindAddress(const std::string& named, const std::string& source, const std::string& masterAddr) {
  if (named.empty()) return isLoopback(masterAddr) ? "127.0.0.1" : routeTo(masterAddr);
  const auto all = localAddresses();
  for (const auto& a : all)
    if (a.address == named) return named;
  std::string first;
  for (const auto& a : all) {
    if (a.interface != named) continue;
    if (a.address.find(':') == std::string::npos) return a.address;  // IPv4 first, as Gloo's interface lookup
    if (first.empty()) first = a.address;
  }
  if (!first.empty()) return first;
  const bool looksLikeAddress = named.find_first_not_of("0123456789.:abcdefABCDEF") == std::string::npos &&
                                (named.find('.') != std::string::npos || named.find(':') != std::string::npos);
  throw ConfigError(source + " " + named + " is not " +
                    (looksLikeAddress ? "an address of this machine" : "an interface or address of this machine") +
                    ", so no rank could listen there; this machine has: " + listed(all) +
                    ". Name one of them (an interface such as eth0 also works)");
}

std::string firstSlurmHost(const std::string& hostList) {
  std::string out;
  size_t i = 0;
  while (i < hostList.size() && hostList[i] != ',') {
    if (hostList[i] == '[') {
      const size_t close = hostList.find(']', i);
      if (close == std::string::npos) throw ConfigError("the Slurm node list '" + hostList + "' has an unclosed '['");
      const std::string range = hostList.substr(i + 1, close - i - 1);
      out += range.substr(0, range.find_first_of("-,"));
      i = close + 1;
    } else {
      out += hostList[i++];
    }
  }
  if (out.empty()) throw ConfigError("the Slurm node list '" + hostList + "' names no host");
  return out;
}

int slurmTasksOnNode(const std::string& tasksPerNode, int node) {
  int at = 0;
  size_t i = 0;
  while (i < tasksPerNode.size()) {
    char* end = nullptr;
    const long tasks = std::strtol(tasksPerNode.c_str() + i, &end, 10);
    if (end == tasksPerNode.c_str() + i || tasks < 0) return 0;
    i = size_t(end - tasksPerNode.c_str());
    long repeat = 1;
    if (tasksPerNode.compare(i, 2, "(x") == 0) {
      repeat = std::strtol(tasksPerNode.c_str() + i + 2, &end, 10);
      i = size_t(end - tasksPerNode.c_str());
      if (i >= tasksPerNode.size() || tasksPerNode[i] != ')' || repeat < 1) return 0;
      ++i;
    }
    if (node < at + repeat) return int(tasks);
    at += int(repeat);
    if (i < tasksPerNode.size() && tasksPerNode[i] == ',') ++i;
  }
  return 0;
}

}  // namespace ps

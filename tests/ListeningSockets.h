#pragma once
// The TCP sockets some processes listen on, read the way `ss -ltnp` reads them: socket inodes from /proc/PID/fd,
// listening entries from /proc/net/tcp and tcp6. For tests that check nothing listens outside loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ps::test {

// A TCP port on loopback that nothing listens on right now (for ranks a test starts by hand).
inline int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

// A TCP connection to `port` on loopback (for tests that play a stranger or a raw peer); -1 when it is refused.
inline int connectToLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(uint16_t(port));
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

struct Listener {
  std::string address;  // as /proc prints it: "0100007F" (127.0.0.1), "00000000" (every IPv4 interface), ...
  int port = 0;
  bool ipv6 = false;
  bool loopback() const {
    if (!ipv6) return address.size() == 8 && address.substr(6) == "7F";  // 127.0.0.0/8, little-endian hex
    return address == "00000000000000000000000001000000";                // ::1
  }
  std::string text() const { return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port); }
};

inline std::vector<Listener> listenersOf(const std::vector<pid_t>& pids) {
  namespace fs = std::filesystem;
  std::set<std::string> inodes;
  for (pid_t pid : pids) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code rl;
      const std::string target = fs::read_symlink(it->path(), rl).string();
      if (!rl && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  std::vector<Listener> out;
  for (const bool v6 : {false, true}) {
    std::ifstream table(v6 ? "/proc/net/tcp6" : "/proc/net/tcp");
    std::string line;
    std::getline(table, line);  // column titles
    while (std::getline(table, line)) {
      std::istringstream in(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      in >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      const auto colon = local.find(':');
      out.push_back({local.substr(0, colon), int(std::stoul(local.substr(colon + 1), nullptr, 16)), v6});
    }
  }
  return out;
}

}  // namespace ps::test

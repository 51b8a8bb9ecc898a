#include "engine/runs/store/RunStoreSystem.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

namespace ps::runstore {

namespace {

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

// The fields of /proc/<pid>/stat after the command name; empty if unavailable.
std::vector<std::string> procStatFields(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  const auto close = line.rfind(')');  // the command name may itself contain spaces or ')'
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;  // [0] = state (field 3), [19] = starttime (field 22)
}

std::string startTime(int64_t pid) {
  const auto f = procStatFields(pid);
  return f.size() > 19 ? f[19] : std::string();
}

}  // namespace

ProcessIdentity currentProcess() {
  ProcessIdentity p;
  p.pid = static_cast<int64_t>(getpid());
  p.host = hostName();
  p.start = startTime(p.pid);
  return p;
}

bool processAlive(const ProcessIdentity& p) {
  if (!p.host.empty() && p.host != hostName()) return true;  // cannot tell from here
  if (p.pid <= 0) return false;
  if (::kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH) return false;
  const auto f = procStatFields(p.pid);
  if (!f.empty() && (f[0] == "Z" || f[0] == "X")) return false;  // exited, not yet reaped
  if (!p.start.empty() && f.size() > 19 && f[19] != p.start) return false;  // pid reused
  return true;
}

std::string utcNowIso8601() {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace ps::runstore

#pragma once
// Operating-system facts the run store records: time stamps and who owns a run.
#include <cstdint>
#include <string>

namespace ps::runstore {

// Identifies a process well enough to tell, later, whether it is still alive.
struct ProcessIdentity {
  int64_t pid = 0;
  std::string host;   // gethostname(); a pid only means something on its own host
  std::string start;  // start time from /proc/<pid>/stat (Linux), guards against pid reuse
};

ProcessIdentity currentProcess();

// False only when `p` has certainly ended: no such pid, a zombie, or the pid now belongs to a
// process that started at another time. Processes on other hosts count as alive.
bool processAlive(const ProcessIdentity& p);

// Now, as ISO-8601 UTC with milliseconds: 2024-05-01T12:34:56.789Z (sorts as text).
std::string utcNowIso8601();

}  // namespace ps::runstore

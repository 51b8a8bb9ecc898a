#pragma once
// Files for tests: a fresh, empty folder of this process's own under the temporary directory, and a file's text.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ps::test {

// <tmp>/<prefix>-<pid>/<name>, emptied: tests of one binary never see another run's files.
inline std::filesystem::path freshDir(const std::string& prefix, const std::string& name = "") {
  const auto dir = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ps::test

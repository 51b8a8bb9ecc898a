#include "engine/core/UserFolders.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace ps {

namespace {

std::string homeFolder() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[16384];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir) return found->pw_dir;
  return "";
}

}  // namespace

std::string userDataFolder() {
  namespace fs = std::filesystem;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && x[0] == '/') return (fs::path(x) / "pipesqueeze").string();
  const std::string home = homeFolder();
  return home.empty() ? "" : (fs::path(home) / ".local" / "share" / "pipesqueeze").string();
}

}  // namespace ps

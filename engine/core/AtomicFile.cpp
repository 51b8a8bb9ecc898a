#include "engine/core/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace ps {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("cannot write " + path + ": " + what +
                           "; check that its folder exists, is writable and has free space");
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {}

AtomicFile::~AtomicFile() = default;

void AtomicFile::commit() {
  if (committed_) return;
  const std::string bytes = buffer_.str();
  std::random_device entropy;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp-%08x%08x", entropy(), entropy());
    tmp = path_ + suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) fail(path_, std::strerror(errno));
  }
  if (fd < 0) fail(path_, "no free temporary name beside it");
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(path_, why);
    }
    written += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path_, why);
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {  // replaces a link at the target, never what it points to
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path_, why);
  }
  committed_ = true;
}

void AtomicFile::write(const std::string& path, const std::string& bytes) {
  AtomicFile f(path);
  f.stream() << bytes;
  f.commit();
}

}  // namespace ps

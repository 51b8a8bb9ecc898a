#include "engine/core/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

namespace {

// Writes all of `bytes` to `fd`; the error text on failure, empty on success.
std::string writeAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? std::strerror(errno) : "nothing could be written";
    written += size_t(n);
  }
  return {};
}

bool isStream(mode_t mode) {
  return S_ISFIFO(mode) || S_ISCHR(mode);
}

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder; give a file name inside it";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

// What is at the target decides how it is written: nothing or a regular file is replaced whole (a temporary, then
// one rename); a pipe or a character device (/dev/null, a process substitution's /dev/fd/N) is written through as a
// stream, and stays what it is; a link is followed only to such a stream. Anything else is refused untouched.
void AtomicFile::commit() {
  if (committed_) return;
  const std::string bytes = buffer_.str();
  struct stat at {};
  if (::lstat(path_.c_str(), &at) == 0) {
    mode_t mode = at.st_mode;
    if (S_ISLNK(mode)) {
      struct stat target {};
      if (::stat(path_.c_str(), &target) != 0 || !isStream(target.st_mode)) {
        std::error_code ec;
        const auto to = std::filesystem::read_symlink(path_, ec);
        throw std::runtime_error("cannot write " + path_ + ": it is a symbolic link" +
                                 (ec ? std::string() : " to " + to.string()) +
                                 "; write to the file itself, or remove the link");
      }
      mode = target.st_mode;
    }
    if (isStream(mode)) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd < 0) fail(path_, std::strerror(errno));
      struct stat opened {};
      if (::fstat(fd, &opened) != 0 || !isStream(opened.st_mode)) {  // replaced between the look and the open
        ::close(fd);
        throw std::runtime_error("cannot write " + path_ + ": it changed while being opened; retry");
      }
      const std::string why = writeAll(fd, bytes);
      ::close(fd);
      if (!why.empty()) fail(path_, why);
      committed_ = true;
      return;
    }
    if (!S_ISREG(mode))
      throw std::runtime_error("cannot write " + path_ + ": it is " + kindOf(mode) +
                               "; only a regular file, a pipe or a character device can be written");
  }
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
  if (const std::string why = writeAll(fd, bytes); !why.empty()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path_, why);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(path_, why);
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
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

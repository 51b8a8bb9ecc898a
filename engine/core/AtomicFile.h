#pragma once
// Writing a file so that nothing already saved is lost, nothing planted is followed and nothing that is not a file is
// replaced. A regular file (or none) gets the bytes through a temporary beside it, created exclusively and never
// through a symbolic link (O_CREAT | O_EXCL | O_NOFOLLOW, with a random name), flushed to disk and renamed over the
// target in one step: a crash leaves the old file. A pipe or a character device (/dev/null, `-o >(gzip > f)`) is
// written through as the stream it is, also behind a link. A link to a file, a folder, a socket or a block device is
// refused and left as it is. Torch-free.
#include <sstream>
#include <stdexcept>
#include <string>

namespace ps {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // an uncommitted file is dropped; the target stays as it was
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return buffer_; }
  // Writes, flushes and renames over the target; throws std::runtime_error naming the target and the fix.
  void commit();

  // Writes `bytes` to `path` the same way.
  static void write(const std::string& path, const std::string& bytes);

 private:
  std::string path_;
  std::ostringstream buffer_;
  bool committed_ = false;
};

}  // namespace ps

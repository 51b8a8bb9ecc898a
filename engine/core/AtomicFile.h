#pragma once
// Writing a file so that nothing already saved is lost and nothing planted is followed: the bytes go to a temporary
// beside the target, created exclusively and never through a symbolic link (O_CREAT | O_EXCL | O_NOFOLLOW, with a
// random name), then are flushed to disk and renamed over the target in one step. A crash leaves the old file; a
// link planted at a temporary name (say `out.csv.part`) is never written through. Torch-free.
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

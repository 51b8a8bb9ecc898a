#pragma once
// What crosses a link: forward activations and backward activation gradients cross a stage boundary; Gradients are
// the weight gradients a stage's data-parallel replicas exchange.
namespace ps {

enum class Direction { Forward = 0, Backward = 1, Gradients = 2 };
inline const char* directionName(Direction d) {
  return d == Direction::Forward ? "fwd" : d == Direction::Backward ? "bwd" : "grad";
}

}  // namespace ps

// Catalogue entries of the error compensations (their rules are in engine/compress/Compensation.cpp).
#include "engine/compress/CompensationList.h"

namespace ps {

MethodSpec NoCompensationEntry::spec() { return methodSpec("none", "none", "the codec's output is used as it is"); }
MethodSpec ErrorFeedbackEntry::spec() {
  return methodSpec("ef", "EF", "error feedback: the residual of each message is added to the next");
}
MethodSpec Ef21Entry::spec() {
  return methodSpec("ef21", "EF21", "compresses the change of a shift both ends keep (Richtárik et al.)");
}
MethodSpec DianaEntry::spec() {
  return methodSpec("diana", "DIANA", "compresses the difference to a shift that moves by α times it", {"alpha"});
}
MethodSpec RandDianaEntry::spec() {
  return methodSpec("randdiana", "Rand-DIANA", "DIANA whose shift is refreshed uncompressed with probability p",
                    {"alpha", "p"});
}
MethodSpec AqsgdEntry::spec() {
  MethodSpec m =
      methodSpec("aqsgd", "AQ-SGD", "activations: compresses the change of each sample's activation between epochs");
  m.forwardOnly = true;
  m.onlyAtStart = "its per-sample buffers are sized and checked against compression.aqsgd_memory_limit_mb before "
                  "the run starts";
  return m;
}

}  // namespace ps

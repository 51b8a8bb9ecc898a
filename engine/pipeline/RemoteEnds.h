#pragma once
// The far ends of a stage's links when its neighbouring stages run in other processes (the same replica's): payloads
// between two GPUs through NCCL, the others through a TCP stream per link direction (engine/dist/LinkStream.h) or,
// with parallel.transport = gloo, Gloo's point-to-point messages.
#include "engine/dist/Cluster.h"
#include "engine/pipeline/Link.h"

#include <memory>
#include <vector>

namespace ps {

// Connects every link direction of this rank's stage to its neighbour and returns the ends (flushed at each step's
// end). Every rank of the run calls it at the same time.
std::vector<std::shared_ptr<RemoteEnd>> connectRemoteEnds(const std::shared_ptr<Cluster>& cluster,
                                                          std::vector<std::unique_ptr<Link>>& links, bool nccl,
                                                          bool gloo, int deviceIndex);

}  // namespace ps

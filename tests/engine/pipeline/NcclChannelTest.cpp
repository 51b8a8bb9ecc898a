// A link between CUDA stages of two processes: what travels through Gloo ahead of an NCCL payload, checked as
// untrusted input. The transport itself needs two GPUs (tests/engine/dist/NcclTest.cpp, tests/app/cli/DistributedTest.cpp).
#include "engine/pipeline/NcclChannel.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

TEST(NcclChannel, AnAnnouncementCarriesThePayloadsSizes) {
  for (uint64_t size : {uint64_t(0), uint64_t(1), uint64_t(1) << 20, (uint64_t(1) << 33) + 5})
    for (uint64_t tail : {uint64_t(0), uint64_t(3), uint64_t(1) << 30}) {
      const Announced a = readAnnouncement(announcePayload(size, tail), UINT64_MAX, "rank 1");
      EXPECT_EQ(a.bytes, size);
      EXPECT_EQ(a.tail, tail);
    }
}

TEST(NcclChannel, AMalformedOrOversizedAnnouncementNamesThePeerBeforeAnythingIsAllocated) {
  auto refused = [](const std::vector<uint8_t>& bytes, uint64_t limit) {
    try {
      readAnnouncement(bytes, limit, "rank 3 (stage 1, replica 1)");
    } catch (const ClusterError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string short_ = refused({1, 2, 3}, UINT64_MAX);
  EXPECT_NE(short_.find("rank 3 (stage 1, replica 1) sent a payload announcement of 3 bytes, not 16"),
            std::string::npos)
      << short_;
  const std::string large = refused(announcePayload(4097), 4096);
  EXPECT_NE(large.find("announced a payload of 4097 + 0 bytes, more than the 4096 this link accepts"),
            std::string::npos)
      << large;
  // The tail counts against the same limit, and a sum that wraps around is no way past it.
  EXPECT_NE(refused(announcePayload(4000, 97), 4096).find("4000 + 97 bytes"), std::string::npos);
  EXPECT_NE(refused(announcePayload(16, UINT64_MAX - 8), UINT64_MAX).find("more than the"), std::string::npos);
  EXPECT_EQ(refused(announcePayload(4000, 96), 4096), "accepted");
  // Without a known shape the cluster's own ceiling still holds.
  const std::string huge = refused(announcePayload(UINT64_MAX), UINT64_MAX);
  EXPECT_NE(huge.find("more than the " + std::to_string(Cluster::kMaxMessageBytes)), std::string::npos) << huge;
  EXPECT_EQ(refused(announcePayload(4096), 4096), "accepted");
}

}  // namespace
}  // namespace ps

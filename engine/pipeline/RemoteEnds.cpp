#include "engine/pipeline/RemoteEnds.h"

#include "engine/core/Metrics.h"
#include "engine/pipeline/ClusterChannel.h"
#include "engine/pipeline/NcclChannel.h"
#include "engine/pipeline/StreamChannel.h"

namespace ps {

std::vector<std::shared_ptr<RemoteEnd>> connectRemoteEnds(const std::shared_ptr<Cluster>& cluster,
                                                          std::vector<std::unique_ptr<Link>>& links, bool nccl,
                                                          bool gloo, int deviceIndex) {
  std::vector<std::shared_ptr<RemoteEnd>> ends;
  const int me = cluster->stage(), replica = cluster->replica(), stages = cluster->stages();
  const bool streams = !nccl && !gloo;
  if (!streams) cluster->openPointToPoint();  // every rank at once: the flags are the same on all of them
  // Streams: every receiving end first. It only listens and publishes its address, so no rank waits for another
  // until its sending ends look those addresses up, and by then every rank has published all of its own.
  for (bool receiving : {true, false})
    for (int b : {me - 1, me}) {
      if (b < 0 || b + 1 >= stages) continue;
      const int peer = cluster->rankOf(b == me ? me + 1 : me - 1, replica);
      for (Direction d : {Direction::Forward, Direction::Backward}) {
        const bool sends = (d == Direction::Forward) == (b == me);
        if (streams ? receiving == sends : !receiving) continue;
        const int tag = 2 * b + int(d);
        const std::string name = metric::linkName(b, d) + "/replica" + std::to_string(replica);
        std::shared_ptr<RemoteEnd> end;
        if (nccl) {  // the announcement goes ahead of the payload through Gloo, on the same tag
          end = std::make_shared<NcclChannel>(cluster, peer, tag, deviceIndex, name, b == me);
        } else if (gloo) {
          end = std::make_shared<ClusterChannel>(cluster, peer, tag);
        } else {
          const LinkStream::Peer who{cluster->describe(cluster->rank()), cluster->describe(peer),
                                     cluster->options().token, cluster->options().timeout_s};
          auto share = [cluster, name](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
            return cluster->share(key, publish, mine, "the two ends of " + name);
          };
          const std::string key = "stream/" + name;
          end = std::make_shared<StreamChannel>(
              sends ? LinkStream::sending(cluster->bindAddress(), key, who, share)
                    : LinkStream::receiving(cluster->bindAddress(), key, who, share));
        }
        ends.push_back(end);
        links[size_t(b)]->connectRemote(d, std::move(end));
      }
    }
  return ends;
}

}  // namespace ps

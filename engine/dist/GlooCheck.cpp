#include "engine/dist/GlooCheck.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ps {
namespace {

constexpr int kCheckTag = 0x7c4e;  // above every tag a run's links use (two per link and direction)

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

bool glooTimedOut(const std::string& what) {
  return what.find("imed out") != std::string::npos || what.find("imeout") != std::string::npos;
}

uint64_t glooCheckWord(const std::string& token, int attempt, int from, int to) {
  uint64_t h = fnv1a(14695981039346656037ull, token.data(), token.size());
  const int32_t fields[] = {attempt, from, to};
  return fnv1a(h, fields, sizeof fields);
}

bool glooGroupAnswers(c10d::ProcessGroupGloo& group, int rank, int world, const std::string& token, int attempt,
                      std::chrono::milliseconds wait, std::string* why) {
  const auto until = std::chrono::steady_clock::now() + wait;
  const auto opts = torch::TensorOptions().dtype(torch::kInt64);
  std::vector<at::Tensor> outgoing, incoming;
  std::vector<c10::intrusive_ptr<c10d::Work>> sends, receives;
  for (int peer = 0; peer < world; ++peer) {
    if (peer == rank) continue;
    std::vector<at::Tensor> out{torch::full({1}, int64_t(glooCheckWord(token, attempt, rank, peer)), opts)};
    outgoing.push_back(out[0]);
    sends.push_back(group.send(out, peer, kCheckTag));
    std::vector<at::Tensor> in{torch::zeros({1}, opts)};
    incoming.push_back(in[0]);
    receives.push_back(group.recv(in, peer, kCheckTag));
  }
  // Every send is waited for too, even once a peer has failed: a send whose work is dropped early may never leave (Gloo
  // sends a message once its receiver has asked for it), and then a correct peer would wrongly fail its own check.
  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()),
                    std::chrono::milliseconds(1));
  };
  std::string failure;
  size_t i = 0;
  for (int peer = 0; peer < world; ++peer) {
    if (peer == rank) continue;
    const size_t at = i++;
    try {
      receives[at]->wait(left());
    } catch (const std::exception& e) {
      const std::string what = e.what();
      const bool silent = glooTimedOut(what);
      if (failure.empty())
        failure = "rank " + std::to_string(peer) +
                  (silent ? " did not answer the group's check within " + std::to_string(wait.count()) + " ms"
                          : " closed its connection during the group's check: " + what.substr(0, what.find('\n')));
      continue;
    }
    if (uint64_t(incoming[at].item<int64_t>()) != glooCheckWord(token, attempt, peer, rank) && failure.empty())
      failure = "the connection to rank " + std::to_string(peer) + " answered the group's check wrongly";
  }
  for (auto& s : sends) {
    try {
      s->wait(left());
    } catch (const std::exception&) {
      if (failure.empty()) failure = "a check word could not be sent";
    }
  }
  if (why) *why = failure;
  return failure.empty();
}

}  // namespace ps

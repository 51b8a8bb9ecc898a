// The stream discipline of stages (engine/pipeline/StageStream.h), on the CPU: its check mode keeps the books every
// GPU stage keeps and catches each way of breaking them, and a whole run kept by it learns exactly what one without
// the checks learns.
#include "engine/pipeline/Link.h"
#include "engine/pipeline/Pipeline.h"
#include "engine/pipeline/StageStream.h"
#include "tests/engine/pipeline/ThreeStagePipeline.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

namespace ps {
namespace {

Link checkedLink() {
  Link::Settings settings;
  settings.streamCheck = true;
  return Link(0, LinkModel{}, settings);
}

// The message of the error `call` throws, or "" when it throws none.
template <typename Call>
std::string disciplineError(Call&& call) {
  try {
    call();
  } catch (const StreamDisciplineError& e) {
    return e.what();
  }
  return "";
}

TEST(StageStream, OnTheCpuAStageHasNoStreamAndItsFencesNoEvent) {
  const StageStream stage(2, torch::kCPU, true, false);
  EXPECT_EQ(stage.cudaHandle(), nullptr);
  EXPECT_EQ(StageStream::current(), nullptr);
  {
    const StageStream::Scope scope(stage);
    EXPECT_EQ(StageStream::current(), &stage);
    Fence f = stage.fence();
    EXPECT_EQ(f.producer, 2);
    EXPECT_EQ(f.event, nullptr);
    EXPECT_EQ(f.waited_by, -1);
    stage.wait(f);
    EXPECT_EQ(f.waited_by, 2);
    stage.followDefault();
    stage.synchronize();
    // Another thread is not in the scope.
    const StageStream* there = &stage;
    std::thread([&] { there = StageStream::current(); }).join();
    EXPECT_EQ(there, nullptr);
  }
  EXPECT_EQ(StageStream::current(), nullptr);
}

// Each end of a link belongs to its stage: the sender's thread sends, the receiver's receives, and a thread that runs
// no stage does neither.
TEST(StageStream, TheCheckModeCatchesALinkUsedFromTheWrongThread) {
  Link link = checkedLink();
  const StageStream first(0, torch::kCPU, true, true), second(1, torch::kCPU, true, true);
  const auto x = torch::randn({4, 8});
  double clock = 0;
  EXPECT_NE(disciplineError([&] { link.send(Direction::Forward, x, 0); })
                .find("link 0 forward: send: called from "
                      "a thread that runs no stage"),
            std::string::npos);
  {
    const StageStream::Scope scope(second);
    EXPECT_NE(disciplineError([&] {
                link.send(Direction::Forward, x, 0);
              }).find("called by stage 1, but it belongs to stage 0"),
              std::string::npos);
  }
  {
    const StageStream::Scope scope(first);
    EXPECT_EQ(disciplineError([&] { link.send(Direction::Forward, x, 0); }), "");
    EXPECT_NE(disciplineError([&] {
                link.receive(Direction::Forward, torch::kCPU, clock);
              }).find("link 0 forward: receive: called by stage 0, but it belongs to stage 1"),
              std::string::npos);
  }
  const StageStream::Scope scope(second);
  torch::Tensor got;
  EXPECT_EQ(disciplineError([&] { got = link.receive(Direction::Forward, torch::kCPU, clock); }), "");
  EXPECT_TRUE(torch::equal(got, x));
  // Backward the other way round: stage 1 sends, stage 0 receives.
  EXPECT_EQ(disciplineError([&] { link.send(Direction::Backward, x, 0); }), "");
  EXPECT_NE(disciplineError([&] {
              link.receive(Direction::Backward, torch::kCPU, clock);
            }).find("link 0 backward: receive: called by stage 1, but it belongs to stage 0"),
            std::string::npos);
}

// A message that reaches a training receive without its sender's fence (here an evaluation message, which carries
// none) would be read with nothing ordering it after the work that made it: the check refuses it, saying so.
TEST(StageStream, TheCheckModeRefusesAMessageWithoutItsSendersFence) {
  Link link = checkedLink();
  link.sendEvaluation(Direction::Forward, torch::randn({2, 3}), false);
  const StageStream second(1, torch::kCPU, true, true);
  const StageStream::Scope scope(second);
  double clock = 0;
  const std::string e = disciplineError([&] { link.receive(Direction::Forward, torch::kCPU, clock); });
  EXPECT_NE(e.find("link 0 forward: receive: the message carries no fence, not one of stage 0's stream"),
            std::string::npos)
      << e;
}

// A whole run with the checks on: every stage thread sends and receives on its own stage's books (nothing throws),
// and the checks change nothing it learns.
TEST(StageStream, ARunKeptByTheCheckModeLearnsWhatOneWithoutItDoes) {
  auto train = [](bool check) {
    CompressionOptions topk;
    topk.method = "topk", topk.k = 0.2, topk.feedback = "ef";
    PipelineOptions o;
    o.stream_check = check;
    Pipeline pipeline = fixtures::threeStagePipeline(3, {topk, topk}, {topk, topk}, o);
    std::vector<double> losses;
    for (int64_t step = 1; step <= 3; ++step) {
      torch::manual_seed(step);
      const auto x = torch::randn({12, 1, 28, 28});
      const auto y = torch::randint(0, 10, {12}, torch::kInt64);
      losses.push_back(pipeline.step(x, y, step, 0).loss);
    }
    return losses;
  };
  std::vector<double> checked;
  ASSERT_NO_THROW(checked = train(true));
  EXPECT_EQ(checked, train(false));
}

}  // namespace
}  // namespace ps

// A run started from a preset with changed training settings does not keep the preset's name and tags.
#include "engine/runs/config/Config.h"
#include "engine/runs/config/RunLabels.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

using nlohmann::json;

json baseline() {
  json c = Config::defaults().json;
  c["run"]["name"] = "Fashion-MNIST, uncompressed";
  c["run"]["tags"] = "fashion,baseline";
  return Config::fromJson(c).json;
}

TEST(RunLabels, ATrainingChangeRenamesAndRetagsTheRun) {
  const json preset = baseline();
  json run = preset;
  run["compression"]["forward"]["method"] = "topk";
  run["train"]["lr"] = 0.01;
  EXPECT_EQ(trainingChanges(preset, run), (std::vector<std::string>{"compression.forward.method", "train.lr"}));
  EXPECT_EQ(trainingChanges(preset, Config::fromJson(run).json), trainingChanges(preset, run))
      << "validating adds no difference of its own";
  ASSERT_TRUE(relabelModified(preset, run));
  EXPECT_EQ(run["run"]["name"], "Fashion-MNIST, uncompressed, compression.forward.method=topk, train.lr=0.01");
  EXPECT_EQ(run["run"]["tags"], "modified");
}

TEST(RunLabels, SettingsThatDoNotChangeTrainingKeepTheLabels) {
  const json preset = baseline();
  json run = preset;
  run["eval"]["every_steps"] = 7;
  run["telemetry"]["histogram_every"] = 0;
  run["parallel"]["mode"] = "processes";
  run["train"]["threads"] = 1;
  run["link"]["mode"] = "throttled";  // really waiting changes the wall time, not what is computed
  run["run"]["notes"] = "a note";
  EXPECT_TRUE(trainingChanges(preset, run).empty());
  EXPECT_FALSE(relabelModified(preset, run));
  EXPECT_EQ(run["run"]["tags"], "fashion,baseline");
}

TEST(RunLabels, WhatTheUserNamedOrTaggedStays) {
  const json preset = baseline();
  json named = preset;
  named["run"]["name"] = "my topk";
  named["compression"]["forward"]["method"] = "topk";
  EXPECT_TRUE(relabelModified(preset, named));
  EXPECT_EQ(named["run"]["name"], "my topk");
  EXPECT_EQ(named["run"]["tags"], "modified") << "the preset's tags still went";
  json both = named;
  both["run"]["tags"] = "mine";
  EXPECT_FALSE(relabelModified(preset, both));
  EXPECT_EQ(both["run"]["tags"], "mine");
}

TEST(RunLabels, ManyChangesAreCountedAfterTheFirstThree) {
  const json preset = baseline();
  json run = preset;
  run["train"]["lr"] = 0.01;
  run["train"]["seed"] = 9;
  run["train"]["batch_size"] = 32;
  run["link"]["bandwidth_mbps"] = 100;
  run["pipeline"]["microbatches"] = 2;
  ASSERT_TRUE(relabelModified(preset, run));
  EXPECT_EQ(
      run["run"]["name"],
      "Fashion-MNIST, uncompressed, link.bandwidth_mbps=100, pipeline.microbatches=2, train.batch_size=32, +2 more");
}

}  // namespace
}  // namespace ps

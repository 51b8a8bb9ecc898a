// A saved run exported for TensorBoard and read back: every record checked by our reader, every event parsed with
// protobuf, and every scalar equal to what `runs export --csv` writes for the run.
#include "engine/runs/store/RunCsv.h"
#include "engine/tensorboard/Records.h"
#include "engine/tensorboard/TensorBoardExport.h"
#include "engine/tensorboard/event.pb.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ps::tensorboard {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("pipesqueeze-tb-" + std::to_string(::getpid()));
  std::unique_ptr<RunStore> store;
  int64_t id = 0;
  Fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    store = std::make_unique<RunStore>((dir / "runs.sqlite").string());
    id = store->createRun("topk 1% / sweep", json{{"task", "synthetic"}, {"train", {{"lr", 0.01}}}}.dump(), "test",
                          "suite-1", "a note");
    std::vector<MetricPoint> metrics;
    for (int s = 1; s <= 20; ++s) {
      metrics.push_back({s, "train/loss", 2.0 / s + 1e-7 * s, 0.25 * s, 0.5 * s});
      metrics.push_back({s, "link0/fwd/wire_bytes", 1000.0 + s, 0.25 * s + 0.01, 0.5 * s + 0.02});
      if (s % 5 == 0) metrics.push_back({s, "eval/accuracy", 0.1 * s / 2, 0.25 * s + 0.02, 0.5 * s});
    }
    metrics.push_back({7, "train/loss", 0.123, 1.9, 3.6});  // a key repeated at a step: the last value wins
    std::vector<EventRow> events = {{10, 2.5, "setting", R"({"key":"compression.forward.k","from":0.1,"to":0.01})"},
                                    {10, 2.5, "reset", R"({"boundary":0})"}};
    std::vector<HistogramRow> histograms = {{5, "link0/fwd/values", -1.0, 1.0, {1, 4, 10, 4, 1}},
                                            {15, "link0/fwd/values", -0.5, 0.5, {0, 2, 20, 2, 0}}};
    store->append(id, metrics, events, histograms);
    store->finishRun(id, "finished", "", json{{"steps", 20}}.dump());
  }
  ~Fixture() { fs::remove_all(dir); }
};

std::vector<Event> readEvents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<Event> events;
  for (const auto& record : readRecords(in)) {
    Event e;
    EXPECT_TRUE(e.ParseFromString(record)) << "record " << events.size() << " is not an Event";
    events.push_back(e);
  }
  return events;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream s(line);
  std::string cell;
  while (std::getline(s, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

TEST(TensorBoardExport, EveryScalarIsTheCsvExportsValueAtItsStepAndWallTime) {
  ASSERT_TRUE(available());
  Fixture f;
  const std::string path = exportRun(*f.store, f.id, (f.dir / "tb").string());
  EXPECT_EQ(fs::path(path).parent_path().filename(), "run-" + std::to_string(f.id) + "-topk-1-sweep");
  EXPECT_EQ(fs::path(path).filename().string().rfind("events.out.tfevents.", 0), 0u);
  const auto events = readEvents(path);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  const double start = epochSeconds(f.store->run(f.id)->created);
  ASSERT_TRUE(std::isfinite(start));

  std::map<int64_t, std::map<std::string, float>> scalars;
  std::map<int64_t, double> wall;
  for (const auto& e : events)
    for (const auto& v : e.summary().value())
      if (v.value_case() == SummaryValue::kSimpleValue) {
        EXPECT_FALSE(scalars[e.step()].count(v.tag())) << "tag " << v.tag() << " twice at step " << e.step();
        scalars[e.step()][v.tag()] = v.simple_value();
        wall[e.step()] = e.wall_time();
      }

  std::stringstream csv;
  ps::writeRunCsv(*f.store, f.id, csv);
  std::string line;
  std::getline(csv, line);
  const auto header = split(line);
  int rows = 0;
  while (std::getline(csv, line)) {
    const auto cells = split(line);
    ASSERT_EQ(cells.size(), header.size()) << line;
    const int64_t step = std::stoll(cells[0]);
    ASSERT_TRUE(scalars.count(step)) << "no scalars at step " << step;
    EXPECT_NEAR(wall[step] - start, std::stod(cells[1]), 1e-5) << "step " << step;
    EXPECT_FLOAT_EQ(scalars[step].at("emulated_s"), float(std::stod(cells[2])));
    size_t present = 1;  // emulated_s
    for (size_t c = 3; c < cells.size(); ++c) {
      if (cells[c].empty()) {
        EXPECT_FALSE(scalars[step].count(header[c])) << header[c] << " at step " << step;
        continue;
      }
      ++present;
      EXPECT_FLOAT_EQ(scalars[step].at(header[c]), float(std::stod(cells[c]))) << header[c] << " at step " << step;
    }
    EXPECT_EQ(scalars[step].size(), present) << "step " << step;
    ++rows;
  }
  EXPECT_EQ(rows, 20);
  EXPECT_EQ(int(scalars.size()), 20);
  EXPECT_FLOAT_EQ(scalars[7].at("train/loss"), 0.123f);
}

TEST(TensorBoardExport, HistogramsConfigAndEventsGoAsTensorBoardHistogramsAndText) {
  Fixture f;
  const auto events = readEvents(exportRun(*f.store, f.id, (f.dir / "tb").string()));
  std::vector<std::pair<int64_t, HistogramProto>> histograms;
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> texts;
  for (const auto& e : events)
    for (const auto& v : e.summary().value()) {
      if (v.value_case() == SummaryValue::kHisto) {
        EXPECT_EQ(v.tag(), "link0/fwd/values");
        histograms.emplace_back(e.step(), v.histo());
      }
      if (v.value_case() == SummaryValue::kTensor) {
        EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "text");
        EXPECT_EQ(v.tensor().dtype(), DT_STRING);
        ASSERT_EQ(v.tensor().string_val_size(), 1);
        texts[v.tag()].emplace_back(e.step(), v.tensor().string_val(0));
      }
    }
  ASSERT_EQ(histograms.size(), 2u);
  const auto& [step, h] = histograms[0];
  EXPECT_EQ(step, 5);
  EXPECT_DOUBLE_EQ(h.min(), -1.0);
  EXPECT_DOUBLE_EQ(h.max(), 1.0);
  EXPECT_DOUBLE_EQ(h.num(), 20.0);
  EXPECT_NEAR(h.sum(), 0.0, 1e-9);  // symmetric counts
  ASSERT_EQ(h.bucket_size(), 5);
  ASSERT_EQ(h.bucket_limit_size(), 5);
  EXPECT_DOUBLE_EQ(h.bucket(2), 10.0);
  EXPECT_DOUBLE_EQ(h.bucket_limit(0), -0.6);
  EXPECT_DOUBLE_EQ(h.bucket_limit(4), 1.0);
  EXPECT_NEAR(h.sum_squares(), 2 * (1 * 0.64 + 4 * 0.16), 1e-9);
  EXPECT_EQ(histograms[1].first, 15);

  ASSERT_EQ(texts["config"].size(), 1u);
  EXPECT_NE(texts["config"][0].second.find("\"task\": \"synthetic\""), std::string::npos) << texts["config"][0].second;
  EXPECT_NE(texts["config"][0].second.find("tags: suite-1"), std::string::npos);
  ASSERT_EQ(texts["events"].size(), 1u) << "one text per step with events";
  EXPECT_EQ(texts["events"][0].first, 10);
  EXPECT_NE(texts["events"][0].second.find("**setting**"), std::string::npos);
  EXPECT_NE(texts["events"][0].second.find("**reset**"), std::string::npos);
}

TEST(TensorBoardExport, ExportingAgainReplacesTheFileAndBadRequestsSayWhy) {
  Fixture f;
  const std::string tb = (f.dir / "tb").string();
  exportRun(*f.store, f.id, tb);
  const std::string second = exportRun(*f.store, f.id, tb);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(second).parent_path())) files += entry.is_regular_file();
  EXPECT_EQ(files, 1) << "TensorBoard would read both files of a run folder";
  try {
    exportRun(*f.store, 999, tb);
    FAIL();
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("no run with id 999"), std::string::npos) << e.what();
  }
  std::ofstream((f.dir / "file").string()) << "not a folder";
  try {
    exportRun(*f.store, f.id, (f.dir / "file").string());
    FAIL();
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos) << e.what();
  }
  std::ifstream in(second, std::ios::binary);
  EXPECT_FALSE(readRecords(in).empty());
}

// A link planted where a run's folder goes is refused: nothing is written or deleted through it.
TEST(TensorBoardExport, APlantedFolderLinkIsRefusedAndNothingIsDeletedThroughIt) {
  Fixture f;
  const fs::path runFolder = fs::path(exportRun(*f.store, f.id, (f.dir / "first").string())).parent_path();
  const fs::path victim = f.dir / "victim";
  fs::create_directories(victim);
  std::ofstream(victim / "events.out.tfevents.1.pipesqueeze.1") << "someone's";
  const fs::path tb = f.dir / "tb";
  fs::create_directories(tb);
  fs::create_directory_symlink(victim, tb / runFolder.filename());
  try {
    exportRun(*f.store, f.id, tb.string());
    FAIL() << "exported through a link";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  int files = 0;
  for (const auto& entry : fs::directory_iterator(victim)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_TRUE(fs::exists(victim / "events.out.tfevents.1.pipesqueeze.1"));
}

// Exporting again removes this run's earlier file only: another writer's events and links stay.
TEST(TensorBoardExport, OnlyThisRunsOwnEarlierFileIsRemoved) {
  Fixture f;
  const std::string tb = (f.dir / "tb").string();
  const fs::path folder = fs::path(exportRun(*f.store, f.id, tb)).parent_path();
  const std::string older = "events.out.tfevents.5.pipesqueeze." + std::to_string(f.id);
  std::ofstream(folder / older) << "an earlier export";
  std::ofstream(folder / "events.out.tfevents.9.otherhost") << "another writer's";
  fs::create_symlink(f.dir / "runs.sqlite", folder / ("events.out.tfevents.7.pipesqueeze." + std::to_string(f.id)));
  exportRun(*f.store, f.id, tb);
  EXPECT_FALSE(fs::exists(folder / older));
  EXPECT_TRUE(fs::exists(folder / "events.out.tfevents.9.otherhost"));
  EXPECT_TRUE(fs::is_symlink(folder / ("events.out.tfevents.7.pipesqueeze." + std::to_string(f.id))));
  EXPECT_TRUE(fs::exists(f.dir / "runs.sqlite"));
}

TEST(TensorBoardExport, TimestampsOfTheStoreReadAsEpochSeconds) {
  EXPECT_DOUBLE_EQ(epochSeconds("1970-01-01T00:00:10.250Z"), 10.25);
  EXPECT_DOUBLE_EQ(epochSeconds("2026-11-26T00:00:00Z"), 1795651200.0);
  EXPECT_TRUE(std::isnan(epochSeconds("yesterday")));
}

}  // namespace
}  // namespace ps::tensorboard

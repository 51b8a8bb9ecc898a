// The runs filter the app's table and `runs list` share: fields, operators, several values per field, negation,
// quotes, suffixes, and the errors a mistyped filter gets.
#include "engine/runs/store/RunFilter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ps {
namespace {

using nlohmann::json;

RunInfo run(int64_t id, const std::string& name, const std::string& status, const std::string& tags, json config,
            json summary) {
  RunInfo r;
  r.id = id;
  r.name = name;
  r.status = status;
  r.tags = tags;
  r.notes = "baseline for the K sweep";
  r.created = "2026-11-26T09:30:00Z";
  r.config_json = config.dump();
  r.summary_json = summary.dump();
  return r;
}

json pipeline(const std::string& fwd, double fwdK, const std::string& bwd, int bits) {
  return {
      {"task", "synthetic"},
      {"pipeline", {{"stages", 3}}},
      {"train", {{"lr", 0.01}, {"seed", 7}}},
      {"link", {{"bandwidth_mbps", 100}}},
      {"compression", {{"forward", {{"method", fwd}, {"k", fwdK}}}, {"backward", {{"method", bwd}, {"bits", bits}}}}}};
}

// Three runs: TopK 5% forward with 4-bit backward, finished; dense, failed; GaussianK 20%, finished, two tags.
std::vector<RunFacts> runs() {
  return {RunFacts::of(run(1, "topk sweep", "finished", "suite-1, sweep", pipeline("topk", 0.05, "quantize", 4),
                           {{"steps", 300}, {"eval_accuracy", 0.842}, {"bytes_wire", 4.2e7}, {"bytes_raw", 8.4e8}})),
          RunFacts::of(run(2, "dense", "failed", "", pipeline("none", 0.1, "none", 8), json::object())),
          RunFacts::of(run(3, "gaussian", "finished", "suite-10", pipeline("gaussiank", 0.2, "none", 8),
                           {{"steps", 300}, {"eval_accuracy", 0.861}, {"bytes_wire", 1.9e8}}))};
}

std::vector<int64_t> shown(const std::string& filter) {
  std::vector<int64_t> ids;
  const RunFilter f = RunFilter::parse(filter);
  for (const auto& r : runs())
    if (f.matches(r)) ids.push_back(int64_t(r.numbers.at("id").front()));
  return ids;
}

using Ids = std::vector<int64_t>;

TEST(RunFilter, BareWordsSearchNameTagsNotesStatusAndMethodInAnyCase) {
  EXPECT_EQ(shown(""), (Ids{1, 2, 3}));
  EXPECT_EQ(shown("GAUSS"), (Ids{3}));
  EXPECT_EQ(shown("quantize"), (Ids{1})) << "the backward method";
  EXPECT_EQ(shown("sweep"), (Ids{1, 2, 3})) << "run 1's name and every run's notes";
  EXPECT_EQ(shown("fail"), (Ids{2}));
  EXPECT_EQ(shown("topk finished"), (Ids{1})) << "every term must hold";
}

TEST(RunFilter, FieldsCompareTextExactlyWhereTheyAreNamesAndNumbersByValue) {
  EXPECT_EQ(shown("status:finished k<0.1 tag:suite-1"), (Ids{1}));
  EXPECT_EQ(shown("tag:suite-1"), (Ids{1})) << "a tag matches whole, not suite-10";
  EXPECT_EQ(shown("status:fin"), (Ids{})) << "status is exact";
  EXPECT_EQ(shown("name:sweep"), (Ids{1})) << "other text fields contain";
  EXPECT_EQ(shown("name=sweep"), (Ids{})) << "= is exact";
  EXPECT_EQ(shown("k>=0.05"), (Ids{1, 3})) << "a dense run has no K";
  EXPECT_EQ(shown("k=0.2"), (Ids{3}));
  EXPECT_EQ(shown("bits<=4"), (Ids{1})) << "only quantizing directions have bits";
  EXPECT_EQ(shown("fwd:topk bwd:quantize"), (Ids{1}));
  EXPECT_EQ(shown("method!=none"), (Ids{1, 3})) << "some direction is not none";
  EXPECT_EQ(shown("stages=3 lr=0.01 seed=7 bandwidth=100"), (Ids{1, 2, 3}));
  EXPECT_EQ(shown("id>1"), (Ids{2, 3}));
}

TEST(RunFilter, ResultsTakeSuffixesAndAccuracyAPercentage) {
  EXPECT_EQ(shown("accuracy>=85%"), (Ids{3}));
  EXPECT_EQ(shown("accuracy>0.84"), (Ids{1, 3}));
  EXPECT_EQ(shown("wire<50M"), (Ids{1}));
  EXPECT_EQ(shown("wire>0.1G"), (Ids{3}));
  EXPECT_EQ(shown("ratio>=20"), (Ids{1})) << "raw over wire";
  EXPECT_EQ(shown("steps=300"), (Ids{1, 3})) << "a run without a summary has no steps";
}

// K is shown as a percentage everywhere, so a filter takes it as one; a claim suite's tags read as fields.
TEST(RunFilter, KTakesAPercentageAndSuiteTagsReadAsFields) {
  EXPECT_EQ(shown("k<10%"), (Ids{1}));
  EXPECT_EQ(shown("k<10%"), shown("k<0.1"));
  EXPECT_EQ(shown("fwd_k=20%"), (Ids{3}));
  auto suiteRun = runs()[2];
  suiteRun.addText("tag", "suite:smoke");
  suiteRun.addText("tag", "variant:topk-ef");
  EXPECT_TRUE(RunFilter::parse("suite:smoke").matches(suiteRun));
  EXPECT_TRUE(RunFilter::parse("suite:SMOKE variant:topk-ef").matches(suiteRun)) << "in any case";
  EXPECT_FALSE(RunFilter::parse("suite:smo").matches(suiteRun)) << "a tag matches whole";
  EXPECT_FALSE(RunFilter::parse("-suite:smoke").matches(suiteRun));
  EXPECT_FALSE(RunFilter::parse("suite:smoke").matches(runs()[0]));
}

TEST(RunFilter, NegationAndQuotes) {
  EXPECT_EQ(shown("-status:failed"), (Ids{1, 3}));
  EXPECT_EQ(shown("-k<0.1"), (Ids{2, 3})) << "a run without K holds every negated K term";
  EXPECT_EQ(shown("\"topk sweep\""), (Ids{1}));
  EXPECT_EQ(shown("notes:\"the k sweep\""), (Ids{1, 2, 3}));
  EXPECT_EQ(shown("\"status:failed\""), (Ids{})) << "a quoted word is a word, not a field";
  EXPECT_EQ(shown("-"), (Ids{1, 3})) << "a lone dash is a word, found in the tags suite-1 and suite-10";
}

TEST(RunFilter, AppliesTheFiguresOfARunStillGoing) {
  RunFacts live = runs()[1];
  EXPECT_FALSE(RunFilter::parse("steps>10").matches(live));
  live.set("steps", 42);
  EXPECT_TRUE(RunFilter::parse("steps>10").matches(live));
}

void refused(const std::string& filter, const std::string& says) {
  try {
    RunFilter::parse(filter);
    ADD_FAILURE() << "'" << filter << "' was accepted";
  } catch (const FilterError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(RunFilter, AMistypedFilterIsRefusedNamingTheTermAndTheFix) {
  refused("stauts:finished", "filter term 'stauts:finished': no field 'stauts'; fields: id, name, status");
  refused("k<ten", "filter term 'k<ten': 'ten' is not a number");
  refused("wire<5X", "'5X' is not a number");
  refused("bits<50%", "only accuracy and K take a %");
  refused("suit:smoke", "no field 'suit'");
  refused("name<b", "name is text; compare it with :, = or !=");
  refused("k<", "no value after the operator");
  refused("name:\"open", "unclosed double quote");
}

// The runs table shows a direction's settings for every run; a single-stage run (no boundary) is found by them too.
TEST(RunFilter, ASingleStageRunIsFoundByTheSettingsTheTableShows) {
  json config = {{"task", "synthetic"},
                 {"pipeline", {{"stages", 1}}},
                 {"compression", {{"forward", {{"method", "topk"}, {"k", 0.01}}}}}};
  const RunFacts f = RunFacts::of(run(4, "one stage", "finished", "", config, json::object()));
  EXPECT_TRUE(RunFilter::parse("k<0.05 fwd:topk").matches(f));
  EXPECT_TRUE(RunFilter::parse("stages=1").matches(f));
}

TEST(RunFilter, AStoredConfigThatNoLongerValidatesStillFiltersByItsRecord) {
  RunInfo r = run(9, "old", "finished", "legacy", json{{"task", "no such task"}}, json{{"steps", 5}});
  r.config_json = "{not json";
  const RunFacts f = RunFacts::of(r);
  EXPECT_TRUE(RunFilter::parse("tag:legacy steps=5").matches(f));
  EXPECT_FALSE(RunFilter::parse("k<1").matches(f));
}

}  // namespace
}  // namespace ps

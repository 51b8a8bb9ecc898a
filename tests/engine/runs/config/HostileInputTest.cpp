// Hostile and broken configuration text, each class with the clear error it must get instead of a crash, a hang or a
// silent misreading. tests/HOSTILE-INPUT.md lists every class of bad input the lab has met (payloads, messages
// between ranks, data files, stores, the rendezvous) with the tests that hold it; the last test here keeps that
// list true.
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/Config.h"
#include "engine/errors/ConfigError.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace ps {
namespace {

namespace fs = std::filesystem;

std::string writeTemp(const std::string& name, const std::string& text) {
  auto dir = fs::temp_directory_path() / ("pipesqueeze-hostile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs `f`, which must throw ConfigError mentioning every one of `words`.
template <class F>
void refused(F&& f, std::initializer_list<std::string> words) {
  try {
    f();
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(HostileInput, DeeplyNestedJsonIsRefusedNamingTheFileInsteadOfCrashing) {
  // 400 KB of arrays 200,000 deep crashed the CLI (config flattening recursed once per level).
  const int depth = 200000;
  const auto arrays = writeTemp("arrays.json", "{\"train\":{\"lr\":" + std::string(depth, '[') + std::string(depth, ']') + "}}");
  refused([&] { loadPreset(arrays); }, {arrays, "nests JSON more than 64 levels"});
  // Objects 30,000 deep took 1.3 GB.
  std::string objects;
  for (int i = 0; i < 30000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(30000, '}');
  const auto deepObjects = writeTemp("objects.json", objects);
  refused([&] { readJsonFile(deepObjects); }, {deepObjects, "nests"});
  // The bound leaves room for any real preset: 60 levels parse.
  EXPECT_NO_THROW(parseJson(std::string(60, '[') + std::string(60, ']'), "test"));
  // Stored JSON (a run's config or summary) read back with the same bound: discarded, not a crash.
  EXPECT_TRUE(parseJsonOrDiscarded(std::string(depth, '[') + std::string(depth, ']')).is_discarded());
  EXPECT_TRUE(parseJsonOrDiscarded("{\"unterminated\": ").is_discarded());
}

TEST(HostileInput, NotJsonAtAllNamesTheFile) {
  const auto path = writeTemp("binary.json", std::string("\x00\x01\xff garbage", 11));
  refused([&] { loadPreset(path); }, {path, "not valid JSON"});
}

TEST(HostileInput, BoundaryIndicesMustBeCanonical) {
  // "00" used to pass validation (parsed as 0) and then be ignored (looked up as the text "00").
  for (const char* index : {"00", "01", "+1", "-0", "1.0", "1e0"}) {
    nlohmann::json j = {{"pipeline", {{"stages", 4}}}};
    j["compression"]["boundaries"][index]["forward"]["method"] = "topk";
    refused([&] { Config::fromJson(j, "preset.json"); }, {"preset.json", index});
  }
  nlohmann::json ok = {{"pipeline", {{"stages", 4}}}};
  ok["compression"]["boundaries"]["1"]["forward"]["method"] = "topk";
  EXPECT_EQ(Config::fromJson(ok, "preset.json").compression.boundary_forward.at(1).method, "topk");
}

TEST(HostileInput, InvalidUtf8TextNamesTheKey) {
  const std::string bad = "run \xff\xfe name";
  nlohmann::json j = {{"run", {{"name", bad}}}};
  refused([&] { Config::fromJson(j, "preset.json"); }, {"run.name", "UTF-8"});
  nlohmann::json config = Config::defaults().json;
  refused([&] { applyOverride(config, "run.notes=" + bad); }, {"run.notes", "UTF-8"});
  refused([&] { applyOverride(config, "task=\xc3\x28"); }, {"task"});  // a bad choice is shown, not a JSON error
  for (const char* overlong : {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"})
    EXPECT_FALSE(validUtf8(overlong)) << overlong;
  EXPECT_TRUE(validUtf8("plain, é, ∑, 😀"));
}

TEST(HostileInput, EveryTestInTheListExists) {
  // tests/HOSTILE-INPUT.md is the list a reviewer reads; every test it names must exist under tests/.
  const fs::path root = fs::path(PIPESQUEEZE_SOURCE_DIR) / "tests";
  std::ifstream listFile(root / "HOSTILE-INPUT.md");
  ASSERT_TRUE(listFile) << "tests/HOSTILE-INPUT.md is missing";
  std::stringstream list;
  list << listFile.rdbuf();
  std::string sources;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.path().extension() == ".cpp") {
      std::ifstream in(entry.path());
      sources.append(std::istreambuf_iterator<char>(in), {});
    }
  const std::regex named("`([A-Z][A-Za-z0-9]*)\\.([A-Za-z0-9_]+)`");
  std::set<std::string> seen;
  const std::string text = list.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), named); it != std::sregex_iterator(); ++it) {
    const std::string suite = (*it)[1], name = (*it)[2];
    seen.insert(suite + "." + name);
    bool found = false;
    for (const char* macro : {"TEST(", "TEST_F(", "TEST_P("})
      found = found || sources.find(macro + suite + ", " + name + ")") != std::string::npos;
    EXPECT_TRUE(found) << suite << "." << name << " is in tests/HOSTILE-INPUT.md but no such test exists";
  }
  EXPECT_GE(seen.size(), 50u) << "the list lost its rows";
}

}  // namespace
}  // namespace ps

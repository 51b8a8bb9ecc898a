// The layers of the code (docs/architecture.md): every folder of engine/ and app/ is one library that builds only on
// the folders below it. This test reads every source file and fails on an include of a folder its own does not build
// on, on torch in a torch-free folder, and on a folder that has no place in the table (a new folder takes its place
// here, in engine/CMakeLists.txt or app/CMakeLists.txt, and in the architecture document).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Layer {
  std::vector<std::string> below;  // the folders it builds on directly (their own ones come with them)
  bool torchFree = false;
};

// Bottom to top. A folder may include its own files and those of every folder it reaches through `below`.
const std::map<std::string, Layer>& layers() {
  static const std::map<std::string, Layer> table = {
      {"engine/errors", {{}, true}},
      {"engine/kernels", {{}, true}},
      {"engine/kernels/cuda", {{"engine/kernels"}, true}},
      {"engine/core", {{"engine/errors"}, true}},
      {"engine/compress/spec", {{}, true}},
      {"engine/runs/config", {{"engine/core", "engine/compress/spec", "engine/errors"}, true}},
      {"engine/runs/store", {{"engine/runs/config"}, true}},
      {"engine/runs/trace", {{"engine/runs/store"}, true}},
      {"engine/data", {{"engine/core", "engine/errors"}, true}},
      {"engine/telemetry", {{"engine/core"}, true}},
      {"engine/suites", {{"engine/runs/store", "engine/runs/trace"}, true}},
      {"engine/tensorboard", {{"engine/runs/store"}, true}},
      {"engine/plan", {{"engine/runs/store"}, true}},
      {"engine/dist/nccl", {{}, true}},
      {"engine/tensors", {{"engine/core"}, false}},
      {"engine/compress",
       {{"engine/compress/spec", "engine/core", "engine/errors", "engine/kernels", "engine/kernels/cuda",
         "engine/tensors"},
        false}},
      {"engine/models", {{"engine/runs/config", "engine/core"}, false}},
      {"engine/dist", {{"engine/errors"}, false}},
      {"engine/pipeline",
       {{"engine/compress", "engine/models", "engine/dist", "engine/dist/nccl", "engine/tensors", "engine/telemetry"},
        false}},
      {"engine/session",
       {{"engine/pipeline", "engine/data", "engine/runs/trace", "engine/suites", "engine/telemetry", "engine/plan"},
        false}},
      {"app/ui/charts", {{}, true}},
      {"app/report", {{"app/ui/charts", "engine/suites"}, true}},
      {"app/ui/runs", {{"app/ui/charts", "engine/runs/trace", "engine/telemetry", "engine/tensorboard"}, true}},
      {"app/ui", {{"app/ui/runs", "app/report", "engine/session", "engine/tensorboard"}, false}},
      {"app/cli", {{"app/report", "engine/session", "engine/tensorboard"}, false}},
      {"app/gui", {{"app/ui"}, false}},
  };
  return table;
}

// The torch-free headers of engine/compress that the catalogue (engine/compress/spec) reads: each codec's,
// compensation's and controller's entry (its spec and the declaration of its factory) and the lists of them. The
// one place a folder reads the one above it; each such header must include nothing but the catalogue and others
// like it, which entryHeaderProblem checks.
bool isEntryHeader(const std::string& path) {
  static const std::regex entry(R"(engine/compress/[A-Za-z]+\.h)");
  return std::regex_match(path, entry);
}

fs::path root() {
  return fs::path(PIPESQUEEZE_SOURCE_DIR);
}

std::vector<std::string> quotedIncludes(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, include)) out.push_back(m[1]);
  return out;
}

bool includesTorch(const fs::path& file) {
  std::ifstream in(file);
  static const std::regex torch(R"(^\s*#\s*include\s*<(torch|ATen|c10)/)");
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, torch)) return true;
  return false;
}

std::string folderOf(const std::string& path) {
  return fs::path(path).parent_path().generic_string();
}

// Every folder a layer may include: its own, and those of the folders it builds on, transitively.
std::set<std::string> reach(const std::string& folder) {
  std::set<std::string> out;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    if (!out.insert(f).second) return;
    auto it = layers().find(f);
    if (it != layers().end())
      for (const auto& b : it->second.below) visit(b);
  };
  visit(folder);
  return out;
}

std::vector<std::string> sources() {
  std::vector<std::string> out;
  for (const char* top : {"engine", "app"})
    for (const auto& e : fs::recursive_directory_iterator(root() / top)) {
      const auto ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh"))
        out.push_back(fs::relative(e.path(), root()).generic_string());
    }
  return out;
}

// "" when `header`, an entry header of engine/compress, includes only the catalogue's headers and other entry
// headers, and no torch.
std::string entryHeaderProblem(const std::string& header) {
  if (includesTorch(root() / header)) return header + " includes torch";
  for (const auto& inc : quotedIncludes(root() / header))
    if (folderOf(inc) != "engine/compress/spec" && !isEntryHeader(inc))
      return header + " includes " + inc;
    else if (isEntryHeader(inc) && inc != header)
      if (std::string why = entryHeaderProblem(inc); !why.empty()) return why;
  return "";
}

TEST(Layers, NoFolderIncludesOneItDoesNotBuildOn) {
  std::vector<std::string> problems;
  const auto files = sources();
  ASSERT_GT(files.size(), 100u) << "no sources found under " << root();
  for (const auto& file : files) {
    const std::string folder = folderOf(file);
    const auto layer = layers().find(folder);
    if (layer == layers().end()) {
      problems.push_back(file + ": its folder " + folder + " has no place in the layer table");
      continue;
    }
    if (layer->second.torchFree && includesTorch(root() / file))
      problems.push_back(file + " includes torch, but " + folder + " is torch-free");
    const auto allowed = reach(folder);
    for (const auto& inc : quotedIncludes(root() / file)) {
      if (inc.rfind("engine/", 0) != 0 && inc.rfind("app/", 0) != 0) continue;
      const std::string target = folderOf(inc);
      if (allowed.count(target)) continue;
      if (folder == "engine/compress/spec" && isEntryHeader(inc)) {
        if (std::string why = entryHeaderProblem(inc); !why.empty())
          problems.push_back(file + " reads the entry header " + inc + ", which must stay torch-free: " + why);
        continue;
      }
      problems.push_back(file + " (" + folder + ") includes " + inc + " (" + target + "), a folder it does not build on");
    }
  }
  std::ostringstream all;
  for (const auto& p : problems) all << "\n  " << p;
  EXPECT_TRUE(problems.empty()) << problems.size() << " layer violations:" << all.str();
}

// The table itself goes only downward: no folder reaches itself through the folders below it.
TEST(Layers, TheTableHasNoCycle) {
  for (const auto& [folder, layer] : layers())
    for (const auto& b : layer.below) {
      EXPECT_TRUE(layers().count(b)) << folder << " builds on " << b << ", which has no row";
      EXPECT_FALSE(reach(b).count(folder)) << folder << " and " << b << " build on each other";
    }
}

// Catches a layer test that passes because it checks nothing: an upward include is reported.
TEST(Layers, AnUpwardIncludeIsReported) {
  EXPECT_FALSE(reach("engine/core").count("engine/pipeline"));
  EXPECT_FALSE(reach("engine/runs/store").count("engine/session"));
  EXPECT_TRUE(reach("engine/session").count("engine/core"));
  EXPECT_TRUE(reach("app/ui").count("engine/compress/spec"));
}

}  // namespace

// A run store this process cannot write (a read-only file in a read-only folder) is still listed, shown, exported and
// re-timed, byte for byte as it was; a command that writes says why it cannot.
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <iterator>

namespace ps::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSmoke = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Run in the child: permission bits bind root too once it is somebody else (nobody). Fork-safe.
void asNobodyIfRoot() {
  if (::geteuid() != 0) return;
  if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(126);
}

// A folder and store nobody may write, made writable again (so it can be removed) when the test ends.
class ReadOnlyFolder {
 public:
  explicit ReadOnlyFolder(fs::path dir) : dir_(std::move(dir)) {}
  void lock(const std::string& store) {
    ASSERT_EQ(::chmod(store.c_str(), 0444), 0);
    ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  }
  ~ReadOnlyFolder() {
    ::chmod(dir_.c_str(), 0755);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
};

// The CLI where `nobody` can run it: a hard link in `dir` (a copy across file systems), since the build tree may sit
// in a folder private to this user (CI's clean clone does).
std::string reachableCli(const fs::path& dir) {
  const fs::path to = dir / "pipesqueeze-cli";
  std::error_code ec;
  fs::create_hard_link(PIPESQUEEZE_CLI, to, ec);
  if (ec) fs::copy_file(PIPESQUEEZE_CLI, to);
  return to.string();
}

TEST(ReadOnlyStore, IsListedShownExportedAndRetimedAndLeftByteForByte) {
  // In the system's /tmp, which every user can reach (the test's own temp folder may be private to this user).
  const fs::path base = fs::is_directory("/tmp") ? fs::path("/tmp") : fs::temp_directory_path();
  const fs::path dir = base / ("pipesqueeze-readonly-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ReadOnlyFolder folder(dir);
  // With the characters a URI gives meaning to: SQLite is handed one for a store whose folder it cannot write.
  const std::string store = (dir / "runs ?#%20.sqlite").string();
  auto trained = runCli({"train", "--preset", kSmoke, "--store", store, "--json"});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string id = std::to_string(json::parse(trained.lastLine())["run_id"].get<int64_t>());
  ASSERT_FALSE(fs::exists(store + "-wal")) << "the run closed its store, which folds the WAL back in";
  const std::string cli = reachableCli(dir);
  const auto asNobody = [&](const std::vector<std::string>& args) { return runCli(args, {}, asNobodyIfRoot, cli); };
  folder.lock(store);
  const std::string before = bytesOf(store);

  auto list = asNobody({"runs", "list", "--store", store});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  EXPECT_NE(list.out.find("smoke"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("finished"), std::string::npos) << list.out;

  auto show = asNobody({"runs", "show", id, "--store", store});
  ASSERT_EQ(show.exitCode, 0) << show.err;
  EXPECT_EQ(json::parse(show.out)["config"]["task"], "synthetic");

  auto csv = asNobody({"runs", "export", id, "--csv", "--store", store});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 61);  // header + 60 steps

  auto retime = asNobody({"runs", "retime", id, "--bandwidth", "100", "--json", "--store", store});
  EXPECT_EQ(retime.exitCode, 0) << retime.err;

  // Writing needs a writable store, and the refusal says what to check.
  auto tag = asNobody({"runs", "tag", id, "keep", "--store", store});
  EXPECT_NE(tag.exitCode, 0);
  EXPECT_NE(tag.err.find(store), std::string::npos) << tag.err;
  EXPECT_NE(tag.err.find("cannot be written"), std::string::npos) << tag.err;

  EXPECT_EQ(bytesOf(store), before) << "reading a read-only store changed it";
  for (const char* suffix : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(fs::exists(store + suffix)) << suffix;
}

}  // namespace
}  // namespace ps::test

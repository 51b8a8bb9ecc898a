// ps::writeRunCsv: exact text of a small run.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "engine/runs/store/RunCsv.h"
#include "engine/runs/store/RunStore.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

using ps::RunStore;
using ps::writeRunCsv;
using ps::test::RunStoreTempDir;

TEST(RunCsv, ExportsWideTableWithQuoting) {
  RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t id = store.createRun("csv", "{}", "v");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  store.append(id,
               {{0, "train/loss", 2.5, 0.5, 0.25},
                {0, "a,b", 1, 0.5, 0.25},
                {0, "link0/fwd/wire_bytes", 1048576, 0.25, 0.125},
                {1, "train/loss", 0.1, 1.0, 0.5},
                {1, "quote\"d", 1e-7, 1.25, 0.5}},
               {}, {});
  store.append(id, {{2, "train/loss", nan, 1.5, 0.75}, {2, "train/loss", -3, 1.5, 0.75}}, {}, {});
  store.append(id, {{3, "a,b", nan, 2, 1}}, {}, {});
  std::ostringstream out;
  writeRunCsv(store, id, out);
  EXPECT_EQ(out.str(),
            "step,wall_s,emulated_s,\"a,b\",link0/fwd/wire_bytes,\"quote\"\"d\",train/loss\n"
            "0,0.5,0.25,1,1048576,,2.5\n"
            "1,1.25,0.5,,,1e-07,0.1\n"
            "2,1.5,0.75,,,,-3\n"
            "3,2,1,nan,,,\n");
}

TEST(RunCsv, EmptyRunGivesHeaderOnly) {
  RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t id = store.createRun("empty", "{}", "v");
  std::ostringstream out;
  writeRunCsv(store, id, out);
  EXPECT_EQ(out.str(), "step,wall_s,emulated_s\n");
  std::ostringstream none;
  EXPECT_THROW(writeRunCsv(store, id + 1, none), ps::StoreError);
}

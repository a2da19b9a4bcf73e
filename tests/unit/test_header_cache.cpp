#include "pipeline/header_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace kbench {
namespace {

namespace fs = std::filesystem;

struct PchSetting {
  explicit PchSetting(const char* value) {
    if (value) {
      setenv("KBENCH_PCH", value, 1);
    } else {
      unsetenv("KBENCH_PCH");
    }
  }
  ~PchSetting() { unsetenv("KBENCH_PCH"); }
};

TEST(HeaderCache, RootIsBeneathTheCacheOnlyWhenTurnedOn) {
  {
    PchSetting unset(nullptr); // opt-in: its flag computation costs every evaluation
    EXPECT_FALSE(pch_root("/c").has_value());
  }
  {
    PchSetting on("on");
    EXPECT_EQ(pch_root("/c"), fs::path("/c/pch"));
  }
  {
    PchSetting off("off");
    EXPECT_FALSE(pch_root("/c").has_value());
  }
  PchSetting bad("yes");
  try {
    (void)pch_root("/c");
    FAIL() << "KBENCH_PCH=yes was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("KBENCH_PCH=yes is not a choice"), std::string::npos);
  }
}

TEST(HeaderCache, OnlyWorkersThatCannotWriteTheCacheAreOfferedIt) {
  const fs::path root = fs::temp_directory_path() / "kbench-test-offer-pch" / "pch";
  fs::remove_all(root.parent_path());
  WorkerLaunch writable;
  writable.sandbox.restrict_filesystem = false; // same user, writes anywhere kbench can
  EXPECT_FALSE(offer_pch(writable, WorkerRole::compile, root));
  EXPECT_FALSE(writable.environment.contains("KBENCH_PCH_DIR"));

  WorkerLaunch confined;
  confined.sandbox.restrict_filesystem = true;
  EXPECT_TRUE(offer_pch(confined, WorkerRole::compile, root));
  EXPECT_EQ(confined.environment.at("KBENCH_PCH_DIR"), root.string());
  EXPECT_TRUE(fs::is_directory(root)); // before the spawn: Landlock grants what exists then
  WorkerLaunch candidate;
  candidate.sandbox.restrict_filesystem = true;
  EXPECT_TRUE(offer_pch(candidate, WorkerRole::candidate, root));

  WorkerLaunch reference;
  reference.sandbox.restrict_filesystem = true;
  EXPECT_FALSE(offer_pch(reference, WorkerRole::reference, root));
  EXPECT_TRUE(pch_safe_for_worker(false, true)); // another user: the 0644 entries stay kbench's
  fs::remove_all(root.parent_path());
}

TEST(HeaderCache, TheBuilderRunsAndItsFailureIsASentence) {
  const fs::path dir = fs::temp_directory_path() / "kbench-test-header-cache";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path candidate = dir / "candidate.py";
  std::ofstream(candidate) << "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";
  // No load_inline call: nothing to build, the cache directory is made and the run succeeds.
  EXPECT_EQ(prepare_pch(dir / "pch", {}, candidate.string(), std::chrono::seconds(60)), "");
  EXPECT_TRUE(fs::is_directory(dir / "pch" / "variants"));
  // A native candidate never starts the builder.
  EXPECT_EQ(prepare_pch(dir / "native-pch", {}, (dir / "k.cu").string(), std::chrono::seconds(5)),
            "");
  EXPECT_FALSE(fs::exists(dir / "native-pch"));
  const std::string failed =
      prepare_pch(dir / "pch", "/bin/false", candidate.string(), std::chrono::seconds(5));
  EXPECT_NE(failed.find("precompiled header not prepared"), std::string::npos) << failed;
  fs::remove_all(dir);
}

TEST(HeaderCache, ACachedBuildIsSeenSoTheHeaderIsNotPrepared) {
  const fs::path dir = fs::temp_directory_path() / "kbench-test-built-library";
  fs::remove_all(dir);
  EXPECT_FALSE(has_built_library(dir)); // no folder yet
  fs::create_directories(dir / "torch-2.11.0-py311" / "my_ext");
  std::ofstream(dir / "torch-2.11.0-py311" / "my_ext" / "main.o") << "";
  EXPECT_FALSE(has_built_library(dir)); // a build cut short: objects, no library
  std::ofstream(dir / "torch-2.11.0-py311" / "my_ext" / "my_ext.so") << "";
  EXPECT_TRUE(has_built_library(dir));
  fs::remove_all(dir);
}

} // namespace
} // namespace kbench

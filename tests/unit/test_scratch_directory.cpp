// sched/scratch_directory.hpp: the owner of an evaluation's scratch directory.
#include "sched/scratch_directory.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <utility>

namespace kbench::sched {
namespace {

namespace fs = std::filesystem;

// A directory with a file in it, so that removal has to be recursive.
fs::path filled(const ScratchDirectory& scratch) {
  fs::create_directories(scratch / "reference");
  std::ofstream(scratch / "reference" / "trial_0.outputs.safetensors") << "x";
  return scratch.path();
}

TEST(ScratchDirectory, IsRemovedWithEverythingInItWhenItGoesOutOfScope) {
  fs::path path;
  {
    const auto scratch = ScratchDirectory::create("kbench-test");
    path = filled(scratch);
    EXPECT_TRUE(fs::is_directory(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(ScratchDirectory, IsKeptWhenToldTo) {
  fs::path path;
  {
    auto scratch = ScratchDirectory::create("kbench-test");
    scratch.keep();
    path = filled(scratch);
  }
  EXPECT_TRUE(fs::exists(path / "reference" / "trial_0.outputs.safetensors"));
  fs::remove_all(path);
}

TEST(ScratchDirectory, IsRemovedWhenAnExceptionUnwindsPastIt) {
  fs::path path;
  try {
    const auto scratch = ScratchDirectory::create("kbench-test");
    path = filled(scratch);
    throw std::runtime_error("the worker did not start");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(path.empty());
  EXPECT_FALSE(fs::exists(path));
}

TEST(ScratchDirectory, AMoveHandsTheDirectoryToTheNewOwner) {
  auto first = ScratchDirectory::create("kbench-test");
  const fs::path path = filled(first);
  {
    ScratchDirectory second = std::move(first);
    EXPECT_TRUE(first.empty());
    EXPECT_EQ(second.path(), path);
  }
  EXPECT_FALSE(fs::exists(path)); // the new owner removed it; the moved-from one owns nothing
}

TEST(ScratchDirectory, AMoveAssignmentRemovesTheDirectoryItReplaces) {
  auto kept = ScratchDirectory::create("kbench-test");
  auto replaced = ScratchDirectory::create("kbench-test");
  const fs::path kept_path = kept.path(), replaced_path = replaced.path();
  replaced = std::move(kept);
  EXPECT_FALSE(fs::exists(replaced_path));
  EXPECT_TRUE(fs::exists(kept_path));
  EXPECT_EQ(replaced.path(), kept_path);
}

TEST(ScratchDirectory, ResetRemovesItNow) {
  auto scratch = ScratchDirectory::create("kbench-test");
  const fs::path path = filled(scratch);
  scratch.reset();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(scratch.empty());
}

TEST(ScratchDirectory, OneRankUsesThePhaseDirectoryItselfAndSeveralRanksOneEach) {
  const ScratchDirectory one(fs::path("/nonexistent/kbench-eval-1"), 1);
  EXPECT_EQ(one.rank_dir("candidate", 0), fs::path("/nonexistent/kbench-eval-1/candidate"));
  ScratchDirectory two(fs::path("/nonexistent/kbench-eval-2"), 2);
  EXPECT_EQ(two.rank_dir("candidate", 1), fs::path("/nonexistent/kbench-eval-2/candidate/rank1"));
  two.keep(); // nothing to remove; says so
}

} // namespace
} // namespace kbench::sched

#include "pipeline/header_cache.hpp"
#include "sched/background_helpers.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

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

TEST(HeaderCache, TheBindingHeaderIsOnlyOnWhenTurnedOn) {
  {
    PchSetting unset(nullptr); // opt-in: no batch has shown it faster
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

TEST(HeaderCache, ACachedBuildIsSeenSoNoHeaderIsBuiltAfterIt) {
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

TEST(HeaderCache, TheHostCompilesHeadersAreOnUnlessTurnedOff) {
  unsetenv("KBENCH_HOST_PCH");
  EXPECT_EQ(host_pch_root("/c"), fs::path("/c/host-pch")); // built after, never waited for
  setenv("KBENCH_HOST_PCH", "on", 1);
  EXPECT_EQ(host_pch_root("/c"), fs::path("/c/host-pch"));
  setenv("KBENCH_HOST_PCH", "off", 1);
  EXPECT_FALSE(host_pch_root("/c").has_value());
  setenv("KBENCH_HOST_PCH", "1", 1);
  try {
    (void)host_pch_root("/c");
    FAIL() << "KBENCH_HOST_PCH=1 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("KBENCH_HOST_PCH=1 is not a choice"),
              std::string::npos);
  }
  unsetenv("KBENCH_HOST_PCH");

  const fs::path root = fs::temp_directory_path() / "kbench-test-offer-host-pch" / "host-pch";
  fs::remove_all(root.parent_path());
  WorkerLaunch writable;
  writable.sandbox.restrict_filesystem = false;
  EXPECT_FALSE(offer_host_pch(writable, WorkerRole::compile, root));
  EXPECT_FALSE(writable.environment.contains("KBENCH_HOST_PCH_DIR"));
  WorkerLaunch confined;
  confined.sandbox.restrict_filesystem = true;
  EXPECT_TRUE(offer_host_pch(confined, WorkerRole::compile, root));
  EXPECT_EQ(confined.environment.at("KBENCH_HOST_PCH_DIR"), root.string());
  EXPECT_TRUE(fs::is_directory(root));
  WorkerLaunch reference;
  reference.sandbox.restrict_filesystem = true;
  EXPECT_FALSE(offer_host_pch(reference, WorkerRole::reference, root));
  fs::remove_all(root.parent_path());
}

// A stand-in interpreter that records how it was called.
fs::path recording_python(const fs::path& dir) {
  const fs::path python = dir / "python";
  std::ofstream(python) << "#!/bin/sh\necho \"$@\" > '" << (dir / "called").string() << "'\n";
  fs::permissions(python, fs::perms::owner_all);
  return python;
}

std::string called(const fs::path& dir) {
  std::ifstream in(dir / "called");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HeaderCache, TheAtenSubsetIsOnUnlessTurnedOffAndBuiltOnceBeforeTheFirstWorker) {
  unsetenv("KBENCH_ATEN_SUBSET");
  EXPECT_EQ(aten_subset_root("/c"), fs::path("/c/aten-subset"));
  setenv("KBENCH_ATEN_SUBSET", "off", 1);
  EXPECT_FALSE(aten_subset_root("/c").has_value());
  setenv("KBENCH_ATEN_SUBSET", "yes", 1);
  EXPECT_THROW((void)aten_subset_root("/c"), std::invalid_argument);
  unsetenv("KBENCH_ATEN_SUBSET");

  const fs::path dir = fs::temp_directory_path() / "kbench-test-offer-aten-subset";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path python = recording_python(dir);
  const fs::path root = dir / "aten-subset";
  WorkerLaunch writable;
  writable.sandbox.restrict_filesystem = false;
  EXPECT_FALSE(offer_aten_subset(writable, WorkerRole::compile, root, python));
  EXPECT_FALSE(fs::exists(dir / "called")); // nothing built for a worker that is not offered it
  WorkerLaunch confined;
  confined.sandbox.restrict_filesystem = true;
  EXPECT_TRUE(offer_aten_subset(confined, WorkerRole::compile, root, python));
  EXPECT_EQ(confined.environment.at("KBENCH_ATEN_SUBSET_DIR"), root.string());
  EXPECT_EQ(called(dir), "-m kbench.aten_subset build --root " + root.string() + "\n");
  fs::remove(dir / "called");
  WorkerLaunch candidate;
  candidate.sandbox.restrict_filesystem = true;
  EXPECT_TRUE(offer_aten_subset(candidate, WorkerRole::candidate, root, python));
  EXPECT_FALSE(fs::exists(dir / "called")); // once per process
  WorkerLaunch reference;
  reference.sandbox.restrict_filesystem = true;
  EXPECT_FALSE(offer_aten_subset(reference, WorkerRole::reference, root, python));
  fs::remove_all(dir);
}

TEST(HeaderCache, EachHeadersBuilderStartsOnlyWhereAWorkerAskedForOne) {
  const fs::path dir = fs::temp_directory_path() / "kbench-test-header-requests";
  fs::remove_all(dir);
  fs::create_directories(dir / "build" / "ext");
  const fs::path python = recording_python(dir);
  const int before = sched::wait_for_background_helpers();
  build_host_pch_requests(dir / "host-pch", python, dir / "build");
  build_pch_requests(dir / "pch", python, dir / "build");
  EXPECT_EQ(sched::wait_for_background_helpers(), before); // nothing asked: nothing ran
  EXPECT_FALSE(fs::exists(dir / "called"));

  fs::create_directories(dir / "build" / "ext" / "kbench-host-pch" / "abc");
  build_pch_requests(dir / "pch", python, dir / "build"); // the other cache's request
  EXPECT_EQ(sched::wait_for_background_helpers(), before);
  build_host_pch_requests(dir / "host-pch", python, dir / "build");
  EXPECT_EQ(sched::wait_for_background_helpers(), before + 1);
  EXPECT_EQ(called(dir), "-m kbench.host_pch build --root " + (dir / "host-pch").string() + " " +
                             (dir / "build").string() + "\n");

  fs::create_directories(dir / "build" / "ext" / "kbench-pch" / "def");
  build_pch_requests(dir / "pch", python, dir / "build");
  EXPECT_EQ(sched::wait_for_background_helpers(), before + 2);
  EXPECT_EQ(called(dir), "-m kbench.pch build --root " + (dir / "pch").string() + " " +
                             (dir / "build").string() + "\n");
  fs::remove_all(dir);
}

} // namespace
} // namespace kbench

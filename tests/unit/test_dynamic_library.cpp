// Unit tests for src/sched/dynamic_library.hpp: the run-time loading that the CUDA driver,
// CUPTI and NVML loaders share, and the "candidate (dlerror)" entries their messages list.
#include "sched/dynamic_library.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace kbench::sched {
namespace {

constexpr const char* kMissing = "libkbench-test-does-not-exist.so.0";

TEST(DynamicLibrary, AMissingLibraryIsAFailureThatNamesItAndSaysWhy) {
  const OpenedLibrary opened = open_first_library({kMissing});
  EXPECT_EQ(opened.handle, nullptr);
  EXPECT_EQ(opened.candidate, "");
  ASSERT_EQ(opened.failures.size(), 1u);
  // The dynamic loader's own words, after the name: "libkbench-... (libkbench-...: cannot open
  // shared object file: No such file or directory)".
  EXPECT_EQ(opened.failures[0].rfind(std::string(kMissing) + " (" + kMissing + ": ", 0), 0u)
      << opened.failures[0];
  EXPECT_NE(opened.failures[0].find("cannot open shared object file"), std::string::npos)
      << opened.failures[0];
  EXPECT_EQ(opened.failures[0].back(), ')');
}

TEST(DynamicLibrary, TheFirstCandidateThatLoadsWinsAndTheOnesBeforeItAreListed) {
  const OpenedLibrary opened = open_first_library({kMissing, "libc.so.6", "libm.so.6"});
  ASSERT_NE(opened.handle, nullptr);
  EXPECT_EQ(opened.candidate, "libc.so.6");
  ASSERT_EQ(opened.failures.size(), 1u);
  EXPECT_EQ(opened.failures[0].rfind(kMissing, 0), 0u);
}

TEST(DynamicLibrary, NoCandidatesLoadNothingAndListNothing) {
  const OpenedLibrary opened = open_first_library({});
  EXPECT_EQ(opened.handle, nullptr);
  EXPECT_TRUE(opened.failures.empty());
}

TEST(DynamicLibrary, ResolveFindsAnEntryPointWithItsType) {
  void* libc = open_first_library({"libc.so.6"}).handle;
  ASSERT_NE(libc, nullptr);
  decltype(&std::strlen) length = nullptr;
  ASSERT_TRUE(resolve(libc, "strlen", length));
  EXPECT_EQ(length("kbench"), 6u);
}

TEST(DynamicLibrary, ResolveOfAMissingEntryPointAnswersFalseAndLeavesItNull) {
  void* libc = open_first_library({"libc.so.6"}).handle;
  ASSERT_NE(libc, nullptr);
  decltype(&std::strlen) entry = &std::strlen;
  EXPECT_FALSE(resolve(libc, "kbench_no_such_entry_point", entry));
  EXPECT_EQ(entry, nullptr);
}

} // namespace
} // namespace kbench::sched

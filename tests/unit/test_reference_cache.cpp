#include "pipeline/reference_cache.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace kbench {
namespace {

namespace fs = std::filesystem;

ReferenceCacheKey sample_key() {
  ReferenceCacheKey key;
  key.problem_sha256 = std::string(64, 'a');
  key.variant = "standard";
  key.precision = "fp32";
  key.device_name = "cpu";
  key.torch_version = "2.11.0";
  key.worker_version = "0.1.0+abc";
  key.seed = 42;
  key.trials = nlohmann::json::array({{{"index", 0}, {"seed", 7}}, {{"index", 1}, {"seed", 8}}});
  return key;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct StoreFixture : ::testing::Test {
  fs::path dir =
      fs::temp_directory_path() /
      ("kbench-refcache-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path inputs = dir / "scratch" / "inputs", outputs = dir / "scratch" / "reference";
  fs::path fresh_inputs = dir / "fresh" / "inputs", fresh_outputs = dir / "fresh" / "reference";
  ReferenceStore store{dir / "cache" / "reference"};
  nlohmann::json trials = nlohmann::json::array(
      {{{"index", 0}, {"seed", 7}, {"input_shapes", {{4}}}}, {{"index", 1}, {"seed", 8}}});

  void SetUp() override {
    for (const auto& d : {inputs, outputs, fresh_inputs, fresh_outputs}) {
      fs::create_directories(d);
    }
    for (int index : {0, 1}) {
      for (const auto& name : trial_input_files(index)) {
        write(inputs / name, "input " + name);
      }
      write(outputs / trial_output_file(index), "output " + std::to_string(index));
    }
  }
  void TearDown() override { fs::remove_all(dir); }

  std::optional<nlohmann::json> load(std::string& warning) {
    std::string from;
    return store.load_trials(sample_key(), fresh_inputs, fresh_outputs, from, warning);
  }
};

TEST(ReferenceCacheKey, EveryFieldChangesTheDigest) {
  const std::string base = key_digest(sample_key());
  EXPECT_EQ(key_digest(sample_key()), base);
  std::vector<void (*)(ReferenceCacheKey&)> changes = {
      [](ReferenceCacheKey& k) { k.problem_sha256[0] = 'b'; },
      [](ReferenceCacheKey& k) { k.variant = "popcorn"; },
      [](ReferenceCacheKey& k) { k.precision = "bf16"; },
      [](ReferenceCacheKey& k) { k.device_name = "NVIDIA H200"; },
      [](ReferenceCacheKey& k) { k.torch_version = "2.12.0"; },
      [](ReferenceCacheKey& k) { k.worker_version = "0.1.0+abd"; },
      [](ReferenceCacheKey& k) { k.seed = 43; },
      [](ReferenceCacheKey& k) { k.trials[1]["seed"] = 9; },
      [](ReferenceCacheKey& k) { k.trials.erase(1); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    ReferenceCacheKey key = sample_key();
    changes[i](key);
    EXPECT_NE(key_digest(key), base) << "change " << i;
  }
}

TEST(ReferenceCacheKey, TheWorkerVersionFollowsThePythonCode) {
  const fs::path dir = fs::temp_directory_path() / "kbench-refcache-version-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "kbench" / "worker");
  write(dir / "kbench" / "worker" / "reference_phase.py", "x = 1\n");
  const std::string before = worker_code_version(dir);
  EXPECT_EQ(worker_code_version(dir), before);
  write(dir / "kbench" / "worker" / "reference_phase.py", "x = 2\n");
  EXPECT_NE(worker_code_version(dir), before);
  EXPECT_TRUE(before.starts_with(KBENCH_VERSION));
  fs::remove_all(dir);
}

TEST_F(StoreFixture, AStoredEntryIsCopiedBackByteForByte) {
  std::string warning;
  EXPECT_FALSE(load(warning).has_value());
  EXPECT_EQ(warning, "");
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "2026-12-01T15:00:00Z"), "");
  std::string from;
  const auto loaded = store.load_trials(sample_key(), fresh_inputs, fresh_outputs, from, warning);
  ASSERT_TRUE(loaded.has_value()) << warning;
  EXPECT_EQ(*loaded, trials);
  EXPECT_EQ(from, "2026-12-01T15:00:00Z");
  for (int index : {0, 1}) {
    for (const auto& name : trial_input_files(index)) {
      EXPECT_EQ(read(fresh_inputs / name), read(inputs / name)) << name;
    }
    EXPECT_EQ(read(fresh_outputs / trial_output_file(index)),
              read(outputs / trial_output_file(index)));
  }
  ReferenceCacheKey other = sample_key();
  other.torch_version = "2.12.0";
  EXPECT_FALSE(store.load_trials(other, fresh_inputs, fresh_outputs, from, warning).has_value());
}

TEST_F(StoreFixture, AnAlteredOutputIsDetectedRemovedAndNotCopied) {
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  const fs::path entry = store.entry_directory(sample_key()) / "trials";
  write(entry / "outputs" / trial_output_file(1), "output 1 but wrong");
  std::string warning;
  EXPECT_FALSE(load(warning).has_value());
  EXPECT_NE(warning.find("corrupt"), std::string::npos) << warning;
  EXPECT_NE(warning.find(trial_output_file(1)), std::string::npos) << warning;
  EXPECT_FALSE(fs::exists(entry));
  EXPECT_FALSE(fs::exists(fresh_outputs / trial_output_file(1)));
  EXPECT_FALSE(fs::exists(fresh_outputs / trial_output_file(0)));
  // Recomputed and stored again, it is trusted again.
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  warning.clear();
  EXPECT_TRUE(load(warning).has_value()) << warning;
}

TEST_F(StoreFixture, ATruncatedOrEditedManifestIsNotTrusted) {
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  const fs::path manifest = store.entry_directory(sample_key()) / "trials" / "manifest.json";
  const std::string text = read(manifest);
  write(manifest, text.substr(0, text.size() / 2));
  std::string warning;
  EXPECT_FALSE(load(warning).has_value());
  EXPECT_NE(warning.find("manifest.json"), std::string::npos) << warning;

  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  auto edited = nlohmann::json::parse(read(manifest));
  edited["body"]["trials"][0]["seed"] = 99; // the checksum left as it was
  write(manifest, edited.dump());
  warning.clear();
  EXPECT_FALSE(load(warning).has_value());
  EXPECT_NE(warning.find("checksum"), std::string::npos) << warning;
}

TEST_F(StoreFixture, AMissingFileAbandonsTheStoreAndLeavesNoEntry) {
  fs::remove(outputs / trial_output_file(1));
  const std::string warning = store.store_trials(sample_key(), trials, inputs, outputs, "t");
  EXPECT_NE(warning.find("not cached"), std::string::npos) << warning;
  EXPECT_FALSE(fs::exists(store.entry_directory(sample_key()) / "trials"));
  for (const auto& e : fs::directory_iterator(store.entry_directory(sample_key()))) {
    EXPECT_EQ(e.path().filename().string().find("trials.tmp"), std::string::npos);
  }
}

TEST_F(StoreFixture, TheCompiledRatioRoundTripsAndACorruptOneIsDropped) {
  std::string warning;
  EXPECT_FALSE(store.load_ratio(sample_key(), warning).has_value());
  ASSERT_EQ(store.store_ratio(sample_key(), {0.62, "2026-12-01T15:00:00Z", "beef"}), "");
  const auto ratio = store.load_ratio(sample_key(), warning);
  ASSERT_TRUE(ratio.has_value()) << warning;
  EXPECT_DOUBLE_EQ(ratio->compiled_over_eager, 0.62);
  EXPECT_EQ(ratio->measured_at, "2026-12-01T15:00:00Z");
  EXPECT_EQ(ratio->candidate_sha256, "beef");
  const fs::path path =
      store.entry_directory(ReferenceStore::ratio_key(sample_key())) / "compiled_ratio.json";
  auto edited = nlohmann::json::parse(read(path));
  edited["body"]["compiled_over_eager"] = 0.01;
  write(path, edited.dump());
  EXPECT_FALSE(store.load_ratio(sample_key(), warning).has_value());
  EXPECT_NE(warning.find("corrupt"), std::string::npos) << warning;
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(StoreFixture, TheCompiledRatioIsSharedByTrialCountsButNotByFirstTrials) {
  // Timing runs the first seeded trial's model: a request for more trials reuses the ratio,
  // one whose first trial differs (another --seed) does not.
  std::string warning;
  ASSERT_EQ(store.store_ratio(sample_key(), {0.62, "2026-12-01T15:00:00Z", "beef"}), "");
  ReferenceCacheKey more = sample_key();
  more.trials.push_back({{"index", 2}, {"seed", 9}});
  const auto shared = store.load_ratio(more, warning);
  ASSERT_TRUE(shared.has_value()) << warning;
  EXPECT_DOUBLE_EQ(shared->compiled_over_eager, 0.62);
  ReferenceCacheKey other_seed = sample_key();
  other_seed.trials[0]["seed"] = 1234;
  EXPECT_FALSE(store.load_ratio(other_seed, warning).has_value());
  EXPECT_EQ(warning, "");
  // The trials themselves stay keyed by the whole list.
  EXPECT_NE(key_digest(more), key_digest(sample_key()));
}

TEST_F(StoreFixture, TheEntriesAreOnlyKbenchsUsersToList) {
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  const auto perms = fs::status(store.root() / "entries").permissions();
  EXPECT_EQ(perms & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
}

} // namespace
} // namespace kbench

namespace kbench {
namespace {

// Trials larger than the cap are not stored (copying them back would cost what recomputing
// does); the cap is KBENCH_REFERENCE_CACHE_MAX_MB, 256 MiB by default.
TEST_F(StoreFixture, TrialsAboveTheSizeCapAreNotStored) {
  setenv("KBENCH_REFERENCE_CACHE_MAX_MB", "0", 1);
  const std::string said = store.store_trials(sample_key(), trials, inputs, outputs, "t");
  unsetenv("KBENCH_REFERENCE_CACHE_MAX_MB");
  EXPECT_EQ(said, "");
  std::string warning;
  EXPECT_FALSE(load(warning).has_value());
  ASSERT_EQ(store.store_trials(sample_key(), trials, inputs, outputs, "t"), "");
  EXPECT_TRUE(load(warning).has_value()) << warning;
}

} // namespace
} // namespace kbench

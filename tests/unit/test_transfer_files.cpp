// The orchestrator's side of the transfer channel (sandbox/transfer_files.hpp): a file of the
// exact length asked for, only beneath the worker's roots, never through a link the worker
// planted, and within a budget; each refusal names the tensor, its size and what to do.
#include "sandbox/transfer_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using kbench::sandbox::transfer_request;
using kbench::sandbox::TransferFiles;
using kbench::sandbox::TransferPolicy;
namespace fs = std::filesystem;

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "expected to find: " << (needle) << "\nin: " << (haystack)

namespace {

class TransferFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("kbench-transfer-test-" + std::to_string(getpid()));
    fs::remove_all(m_root);
    fs::create_directories(m_root / "inputs");
  }
  void TearDown() override { fs::remove_all(m_root); }

  TransferFiles files(std::uint64_t budget = 0) {
    TransferPolicy policy;
    policy.roots = {m_root};
    policy.budget_bytes = budget;
    return TransferFiles(policy);
  }
  static nlohmann::json ask(TransferFiles& files, const fs::path& path, std::uint64_t bytes) {
    return files.answer({{"path", path.string()}, {"bytes", bytes}, {"what", "tensors input.0"}});
  }
  fs::path m_root;
};

std::string message_of(const nlohmann::json& answer) {
  return answer.value("message", "");
}

} // namespace

TEST_F(TransferFilesTest, MakesTheFileAtTheLengthAskedAndCountsIt) {
  auto granted = files();
  const auto path = m_root / "inputs" / "trial_0.inputs.safetensors";
  const auto answer = ask(granted, path, 40U << 20);
  ASSERT_TRUE(answer.value("ok", false)) << answer.dump();
  EXPECT_EQ(fs::file_size(path), 40U << 20);
  EXPECT_EQ(granted.granted_bytes(), 40U << 20);
  // Asked again (the candidate's second trial overwrites nothing of another's): made afresh.
  ASSERT_TRUE(ask(granted, path, 8).value("ok", false));
  EXPECT_EQ(fs::file_size(path), 8U);
}

TEST_F(TransferFilesTest, RefusesPathsOutsideTheRootsOrNotTensorFiles) {
  auto granted = files();
  for (const fs::path& path :
       {fs::temp_directory_path() / "elsewhere.safetensors", m_root / "inputs" / "x.json",
        m_root / "inputs" / ".." / ".." / "x.safetensors", fs::path("inputs/x.safetensors")}) {
    const auto answer = ask(granted, path, 16);
    EXPECT_FALSE(answer.value("ok", true)) << path;
    EXPECT_FALSE(fs::exists(path)) << path;
  }
  EXPECT_EQ(granted.granted_bytes(), 0U);
}

TEST_F(TransferFilesTest, FollowsNoLinkTheWorkerPlanted) {
  const fs::path outside = m_root.string() + "-outside";
  fs::create_directories(outside);
  fs::create_symlink(outside, m_root / "inputs" / "sub");
  std::ofstream(outside / "target.safetensors") << "reference outputs";
  fs::create_symlink(outside / "target.safetensors", m_root / "inputs" / "link.safetensors");
  fs::create_hard_link(outside / "target.safetensors", m_root / "inputs" / "hard.safetensors");
  auto granted = files();
  const auto through_dir = ask(granted, m_root / "inputs" / "sub" / "x.safetensors", 16);
  EXPECT_FALSE(through_dir.value("ok", true));
  EXPECT_CONTAINS(message_of(through_dir), "without following a link");
  EXPECT_FALSE(fs::exists(outside / "x.safetensors"));
  EXPECT_FALSE(ask(granted, m_root / "inputs" / "link.safetensors", 16).value("ok", true));
  const auto hard = ask(granted, m_root / "inputs" / "hard.safetensors", 16);
  EXPECT_FALSE(hard.value("ok", true));
  EXPECT_CONTAINS(message_of(hard), "one link");
  EXPECT_EQ(fs::file_size(outside / "target.safetensors"), 17U); // neither truncated nor grown
  fs::remove_all(outside);
}

TEST_F(TransferFilesTest, ABudgetRefusalNamesTheTensorItsSizeAndWhatToDo) {
  auto granted = files(1U << 20);
  ASSERT_TRUE(ask(granted, m_root / "inputs" / "a.safetensors", 512U << 10).value("ok", false));
  const auto answer = ask(granted, m_root / "inputs" / "b.safetensors", 768U << 10);
  EXPECT_FALSE(answer.value("ok", true));
  EXPECT_CONTAINS(message_of(answer), "tensors input.0 (786432 bytes, 0.8 MiB)");
  EXPECT_CONTAINS(message_of(answer), "transfer budget");
  EXPECT_CONTAINS(message_of(answer), "machine with more memory");
}

TEST_F(TransferFilesTest, AWorkerWithoutRootsWritesItsFilesItself) {
  TransferFiles none{TransferPolicy{}};
  const auto answer = ask(none, m_root / "inputs" / "a.safetensors", 16);
  EXPECT_FALSE(answer.value("ok", true));
  EXPECT_TRUE(answer.value("none_granted", false));
}

TEST(TransferRequest, OnlyAnObjectUnderTransferFileIsOne) {
  EXPECT_NE(transfer_request({{"interim", true}, {"transfer_file", {{"path", "/x"}}}}), nullptr);
  EXPECT_EQ(transfer_request({{"interim", true}, {"returned", 3}}), nullptr);
  EXPECT_EQ(transfer_request({{"interim", true}, {"transfer_file", "x"}}), nullptr);
}

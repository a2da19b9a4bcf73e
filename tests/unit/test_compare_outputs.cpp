#include "compare/compare_outputs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace kbench::compare;
namespace fs = std::filesystem;

namespace {

Tensor f32(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  Tensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

class CompareOutputs : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kbench_compare_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  fs::path write(const char* name, std::map<std::string, Tensor> tensors) {
    TensorFile file;
    file.tensors = std::move(tensors);
    write_safetensors(dir / name, file);
    return dir / name;
  }
  fs::path dir;
};

} // namespace

TEST_F(CompareOutputs, PassesWithinDefaultFp32Tolerance) {
  const auto ref = write("ref", {{"output.0", f32({2, 2}, {1, 2, 3, 4})}});
  const auto cand = write("cand", {{"output.0", f32({2, 2}, {1, 2, 3, 4.0001f})}});
  const auto result = compare_output_files(cand, ref, {});
  EXPECT_TRUE(result.passed) << result.failure;
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_DOUBLE_EQ(result.outputs[0].second.tolerance.atol, 1e-4);
}

TEST_F(CompareOutputs, FailureNamesOutputIndexAndValues) {
  const auto ref = write("ref", {{"output.0", f32({2, 2}, {1, 2, 3, 4})}});
  const auto cand = write("cand", {{"output.0", f32({2, 2}, {1, 2, 3.5f, 4})}});
  const auto result = compare_output_files(cand, ref, {});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.failure.find("output.0"), std::string::npos) << result.failure;
  EXPECT_NE(result.failure.find("1 of 4"), std::string::npos) << result.failure;
  EXPECT_NE(result.failure.find("[1, 0]"), std::string::npos) << result.failure;
}

TEST_F(CompareOutputs, OverrideLoosensFloatingOutputsOnly) {
  const auto ref = write("ref", {{"output.0", f32({1}, {1.0f})}});
  const auto cand = write("cand", {{"output.0", f32({1}, {1.05f})}});
  EXPECT_FALSE(compare_output_files(cand, ref, {}).passed);
  EXPECT_TRUE(compare_output_files(cand, ref, {0.1, 0.0}).passed);
  EXPECT_DOUBLE_EQ(tolerance_for(DType::I64, {0.1, 0.1}).atol, 0.0);
}

TEST_F(CompareOutputs, DifferentOutputCountFails) {
  const auto ref = write("ref", {{"output.0", f32({1}, {1})}});
  const auto cand = write("cand", {{"output.0", f32({1}, {1})}, {"output.1", f32({1}, {1})}});
  const auto result = compare_output_files(cand, ref, {});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.failure.find("2 output tensor(s)"), std::string::npos) << result.failure;
}

TEST_F(CompareOutputs, UnreadableCandidateFileIsAFailureNotAnException) {
  const auto ref = write("ref", {{"output.0", f32({1}, {1})}});
  std::ofstream(dir / "cand") << "garbage";
  const auto result = compare_output_files(dir / "cand", ref, {});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.failure.find("could not be read"), std::string::npos) << result.failure;
  EXPECT_THROW(compare_output_files(ref, dir / "missing", {}), TensorFileError);
}

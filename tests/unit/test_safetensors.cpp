#include "compare/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <unistd.h>

namespace kbench::compare {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!values.empty()) { // memcpy from an empty vector's null data() is undefined
    std::memcpy(out.data(), values.data(), out.size());
  }
  return out;
}

Tensor make_tensor(DType dtype, std::vector<std::int64_t> shape, std::vector<std::byte> data) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(data.begin(), data.end());
  return t;
}

class SafetensorsTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("kbench_safetensors_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path path(const std::string& name) const { return m_dir / name; }

  // A file with an arbitrary header and data buffer; `length` overrides the length field.
  fs::path write_raw(const std::string& header, std::size_t data_bytes = 0,
                     std::optional<std::uint64_t> length = std::nullopt) {
    const fs::path p = path("raw.safetensors");
    std::ofstream out(p, std::ios::binary);
    const std::uint64_t n = length.value_or(header.size());
    for (int i = 0; i < 8; ++i) {
      out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
    }
    out << header << std::string(data_bytes, '\x01');
    return p;
  }

  // Reading `p` must throw TensorFileError naming the file and containing `problem`.
  static void expect_error(const fs::path& p, const std::string& problem) {
    try {
      read_safetensors(p);
      FAIL() << "expected a TensorFileError containing '" << problem << "'";
    } catch (const TensorFileError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(p.string()), std::string::npos) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
  }

  fs::path m_dir;
};

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::BF16), "BF16");
  EXPECT_STREQ(dtype_torch_name(DType::BF16), "bfloat16");
  EXPECT_STREQ(dtype_torch_name(DType::BOOL), "bool");
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::BOOL), 1u);
  EXPECT_TRUE(dtype_is_floating(DType::BF16));
  EXPECT_FALSE(dtype_is_floating(DType::I32));
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                  DType::I16, DType::I8, DType::U8, DType::BOOL}) {
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  EXPECT_THROW(dtype_from_name("F8_E4M3"), std::invalid_argument);
  EXPECT_THROW(dtype_from_name("f32"), std::invalid_argument);
}

TEST_F(SafetensorsTest, RoundTripEveryDtypeWithMetadata) {
  TensorFile file;
  file.metadata = {{"format", "pt"}, {"problem", "level1/softmax"}};
  file.tensors["a_f64"] =
      make_tensor(DType::F64, {2, 3}, bytes_of<double>({1, -2, 3.5, 0, 1e300, -1e-300}));
  file.tensors["b_f32"] = make_tensor(DType::F32, {3}, bytes_of<float>({1.5f, -0.25f, 3e38f}));
  file.tensors["c_f16"] = make_tensor(DType::F16, {2}, bytes_of<std::uint16_t>({0x3C00, 0xC000}));
  file.tensors["d_bf16"] = make_tensor(DType::BF16, {2}, bytes_of<std::uint16_t>({0x3F80, 0x4040}));
  file.tensors["e_i64"] = make_tensor(DType::I64, {2}, bytes_of<std::int64_t>({-(1LL << 40), 7}));
  file.tensors["f_i32"] = make_tensor(DType::I32, {1, 2}, bytes_of<std::int32_t>({-5, 1 << 30}));
  file.tensors["g_i16"] = make_tensor(DType::I16, {2}, bytes_of<std::int16_t>({-32768, 32767}));
  file.tensors["h_i8"] = make_tensor(DType::I8, {3}, bytes_of<std::int8_t>({-128, 0, 127}));
  file.tensors["i_u8"] = make_tensor(DType::U8, {2}, bytes_of<std::uint8_t>({0, 255}));
  file.tensors["j_bool"] = make_tensor(DType::BOOL, {3}, bytes_of<std::uint8_t>({1, 0, 1}));
  file.tensors["k_scalar"] = make_tensor(DType::F32, {}, bytes_of<float>({42.0f}));
  file.tensors["l_empty"] = make_tensor(DType::F32, {0, 4}, {});

  const fs::path p = path("all.safetensors");
  write_safetensors(p, file);
  const TensorFile back = read_safetensors(p);
  EXPECT_EQ(back.metadata, file.metadata);
  ASSERT_EQ(back.tensors.size(), file.tensors.size());
  for (const auto& [name, t] : file.tensors) {
    SCOPED_TRACE(name);
    const Tensor& b = back.tensors.at(name);
    EXPECT_EQ(b.dtype, t.dtype);
    EXPECT_EQ(b.shape, t.shape);
    EXPECT_EQ(b.data, t.data);
  }
  const Tensor& f64 = back.tensors.at("a_f64");
  EXPECT_EQ(f64.numel(), 6u);
  EXPECT_EQ(f64.value(4), 1e300);
  EXPECT_EQ(back.tensors.at("b_f32").value(1), -0.25);
  EXPECT_EQ(back.tensors.at("c_f16").value(1), -2.0);
  EXPECT_EQ(back.tensors.at("d_bf16").value(1), 3.0);
  EXPECT_EQ(back.tensors.at("e_i64").value(0), -1099511627776.0);
  EXPECT_EQ(back.tensors.at("f_i32").value(1), 1073741824.0);
  EXPECT_EQ(back.tensors.at("g_i16").value(0), -32768.0);
  EXPECT_EQ(back.tensors.at("h_i8").value(0), -128.0);
  EXPECT_EQ(back.tensors.at("i_u8").value(1), 255.0);
  EXPECT_EQ(back.tensors.at("j_bool").value(0), 1.0);
  EXPECT_EQ(back.tensors.at("j_bool").value(1), 0.0);
  EXPECT_EQ(back.tensors.at("k_scalar").numel(), 1u);
  EXPECT_EQ(back.tensors.at("k_scalar").value(0), 42.0);
  EXPECT_EQ(back.tensors.at("l_empty").numel(), 0u);
  EXPECT_THROW(back.tensors.at("i_u8").value(2), std::out_of_range);
}

TEST_F(SafetensorsTest, WriterMatchesReferenceLayout) {
  TensorFile file;
  file.tensors["b"] = make_tensor(DType::F32, {1}, bytes_of<float>({2.0f}));
  file.tensors["a"] = make_tensor(DType::F32, {2}, bytes_of<float>({1.0f, 0.5f}));
  const fs::path p = path("layout.safetensors");
  write_safetensors(p, file);

  std::ifstream in(p, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  const std::size_t padded = (json.size() + 7) / 8 * 8;
  ASSERT_EQ(raw.size(), 8 + padded + 12);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) {
    n |= std::uint64_t(static_cast<unsigned char>(raw[i])) << (8 * i);
  }
  EXPECT_EQ(n, padded);
  EXPECT_EQ(raw.substr(8, padded), json + std::string(padded - json.size(), ' '));
  float values[3];
  std::memcpy(values, raw.data() + 8 + padded, 12);
  EXPECT_EQ(values[0], 1.0f); // "a" first: data follows name order
  EXPECT_EQ(values[2], 2.0f);
}

TEST_F(SafetensorsTest, WriterRejectsInconsistentTensor) {
  TensorFile file;
  file.tensors["x"] = make_tensor(DType::F32, {4}, bytes_of<float>({1, 2, 3}));
  EXPECT_THROW(write_safetensors(path("bad.safetensors"), file), TensorFileError);
}

TEST(Decode, Float16KnownBitPatterns) {
  const std::vector<std::uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400,
                                           0x8000, 0x3555, 0x7C00, 0xFC00, 0x7E00};
  const Tensor t =
      make_tensor(DType::F16, {static_cast<std::int64_t>(bits.size())}, bytes_of(bits));
  EXPECT_EQ(t.value(0), 1.0);
  EXPECT_EQ(t.value(1), -2.0);
  EXPECT_EQ(t.value(2), 65504.0);                 // largest finite
  EXPECT_EQ(t.value(3), std::ldexp(1.0, -24));    // smallest subnormal
  EXPECT_EQ(t.value(4), std::ldexp(1023.0, -24)); // largest subnormal
  EXPECT_EQ(t.value(5), std::ldexp(1.0, -14));    // smallest normal
  EXPECT_EQ(t.value(6), 0.0);
  EXPECT_TRUE(std::signbit(t.value(6))); // -0
  EXPECT_EQ(t.value(7), 0.333251953125);
  EXPECT_EQ(t.value(8), std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.value(9), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.value(10)));
}

TEST(Decode, BFloat16KnownBitPatterns) {
  const std::vector<std::uint16_t> bits = {0x3F80, 0xC000, 0x7F7F, 0x0001, 0x0080,
                                           0x3EAB, 0x7F80, 0xFF80, 0x7FC0};
  const Tensor t =
      make_tensor(DType::BF16, {static_cast<std::int64_t>(bits.size())}, bytes_of(bits));
  EXPECT_EQ(t.value(0), 1.0);
  EXPECT_EQ(t.value(1), -2.0);
  EXPECT_EQ(t.value(2), std::ldexp(255.0, 120)); // largest finite: (2 - 2^-7) * 2^127
  EXPECT_EQ(t.value(3), std::ldexp(1.0, -133));  // smallest subnormal
  EXPECT_EQ(t.value(4), std::ldexp(1.0, -126));  // smallest normal
  EXPECT_EQ(t.value(5), 0.333984375);
  EXPECT_EQ(t.value(6), std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.value(7), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.value(8)));
}

TEST_F(SafetensorsTest, RejectsTruncatedHeaderLength) {
  const fs::path p = path("short.safetensors");
  std::ofstream(p, std::ios::binary) << "abcd";
  expect_error(p, "too short");
}

TEST_F(SafetensorsTest, RejectsHeaderLongerThanFile) {
  expect_error(write_raw("{}", 0, 1000), "larger than the file");
}

TEST_F(SafetensorsTest, RejectsHugeHeaderLength) {
  expect_error(write_raw("{}", 0, std::uint64_t{1} << 40), "exceeds the limit");
}

TEST_F(SafetensorsTest, RejectsInvalidJson) {
  expect_error(write_raw("{\"x\": [1, 2"), "not valid JSON");
  expect_error(write_raw("[1, 2]   "), "not a JSON object");
}

TEST_F(SafetensorsTest, RejectsOffsetsOutOfRange) {
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8),
               "tensor 'x': data_offsets [0, 16] lie outside the data buffer of 8 bytes");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8),
               "end before they begin");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,-4]}})", 8),
               "not two non-negative integers");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 8),
               "not two non-negative integers");
}

TEST_F(SafetensorsTest, RejectsOverlappingTensors) {
  expect_error(write_raw(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                         R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                         24),
               "tensors 'a' [0, 16] and 'b' [8, 24] overlap");
}

TEST_F(SafetensorsTest, EmptyTensorsOverlapNothing) {
  const fs::path p = write_raw(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}})",
                               16);
  EXPECT_EQ(read_safetensors(p).tensors.size(), 2u);
}

TEST_F(SafetensorsTest, RejectsSizeMismatch) {
  const fs::path p =
      write_raw(R"({"out.0":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}})", 12);
  try {
    read_safetensors(p);
    FAIL() << "expected TensorFileError";
  } catch (const TensorFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              p.string() + ": tensor 'out.0': data_offsets [0, 12] hold 12 bytes but shape [4] "
                           "of F32 needs 16");
  }
}

TEST_F(SafetensorsTest, RejectsUnknownDtype) {
  expect_error(write_raw(R"({"x":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1),
               "unknown dtype \"F8_E4M3\"");
  expect_error(write_raw(R"({"x":{"dtype":4,"shape":[1],"data_offsets":[0,1]}})", 1),
               "dtype is not a string");
}

TEST_F(SafetensorsTest, RejectsBadShapes) {
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})"),
               "negative dimension");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[2.5],"data_offsets":[0,0]}})"),
               "non-integer");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":4,"data_offsets":[0,0]}})"),
               "shape is not an array");
  // 2^32 * 2^32 * 4 bytes wraps to 0 in 64 bits: must be caught, not matched to [0, 0].
  expect_error(
      write_raw(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})"),
      "overflows");
}

TEST_F(SafetensorsTest, RejectsMalformedEntries) {
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[1]}})", 4),
               "missing field 'data_offsets'");
  expect_error(write_raw(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", 4),
               "unexpected field 'extra'");
  expect_error(write_raw(R"({"x":[1,2]})", 4), "tensor 'x': entry is not a JSON object");
  expect_error(write_raw(R"({"__metadata__":{"k":1}})"), "__metadata__ entry 'k' is not a string");
  expect_error(write_raw(R"({"__metadata__":[1]})"), "__metadata__ is not a JSON object");
}

TEST_F(SafetensorsTest, AcceptsPaddedHeaderAndReadsData) {
  const fs::path p =
      write_raw(R"({"__metadata__":{"k":"v"},"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})"
                "      ",
                2);
  const TensorFile f = read_safetensors(p);
  EXPECT_EQ(f.metadata.at("k"), "v");
  EXPECT_EQ(f.tensors.at("x").value(1), 1.0);
}

TEST_F(SafetensorsTest, RejectsMissingFileAndDirectory) {
  expect_error(path("does_not_exist.safetensors"), "does not exist");
  expect_error(m_dir, "not a regular file");
}

// A candidate may turn its outputs file into a link to the reference's: the reader must refuse
// the link, not read the reference's outputs as the candidate's.
TEST_F(SafetensorsTest, RefusesASymbolicLinkToAGoodFile) {
  const fs::path good = write_raw(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2);
  EXPECT_EQ(read_safetensors(good).tensors.at("x").value(1), 1.0);
  const fs::path link = path("link.safetensors");
  fs::create_symlink(good, link);
  expect_error(link, "is a symbolic link");
}

} // namespace
} // namespace kbench::compare

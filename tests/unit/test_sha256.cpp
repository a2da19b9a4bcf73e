#include "core/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kbench {
namespace {

// Test vectors from NIST's "SHA-256 examples" (FIPS 180-4 validation).
TEST(Sha256, EmptyString) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, OneMillionAInUnevenChunks) {
  Sha256 hasher;
  const std::string chunk(997, 'a');
  std::size_t remaining = 1'000'000;
  std::size_t step = 1;
  while (remaining > 0) {
    // Chunk sizes cycle through 1..997 so that every buffer fill level is exercised.
    const std::size_t n = std::min({step, remaining, chunk.size()});
    hasher.update(chunk.data(), n);
    remaining -= n;
    step = step % 997 + 13;
  }
  EXPECT_EQ(hasher.hex_digest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotMatter) {
  const std::string text(300, 'x');
  const std::string whole = sha256_hex(text);
  for (std::size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 128u, 299u, 300u}) {
    Sha256 hasher;
    hasher.update(std::string_view(text).substr(0, split));
    hasher.update(std::string_view(text).substr(split));
    EXPECT_EQ(hasher.hex_digest(), whole) << "split at " << split;
  }
}

TEST(Sha256, PaddingBoundaries) {
  // 55 bytes fit the padding in one block, 56 need a second: both are classic off-by-one traps.
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, DigestBytesMatchHex) {
  Sha256 hasher;
  hasher.update("abc");
  const auto bytes = hasher.digest();
  EXPECT_EQ(bytes[0], 0xba);
  EXPECT_EQ(bytes[31], 0xad);
}

} // namespace
} // namespace kbench

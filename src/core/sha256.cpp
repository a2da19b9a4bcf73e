#include "core/sha256.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace kbench {

namespace {

constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<std::uint32_t, 8> kInitialHash = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

} // namespace

Sha256::Sha256() : m_h(kInitialHash), m_buffer{} {}

void Sha256::update(std::string_view bytes) {
  update(bytes.data(), bytes.size());
}

void Sha256::update(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  m_total_len += size;
  // Top up a partially filled block first, then hash whole blocks straight from the input.
  if (m_buffer_len > 0) {
    const std::size_t take = std::min(size, m_buffer.size() - m_buffer_len);
    std::memcpy(m_buffer.data() + m_buffer_len, p, take);
    m_buffer_len += take;
    p += take;
    size -= take;
    if (m_buffer_len < m_buffer.size()) {
      return;
    }
    process_block(m_buffer.data());
    m_buffer_len = 0;
  }
  for (; size >= 64; p += 64, size -= 64) {
    process_block(p);
  }
  if (size > 0) {
    std::memcpy(m_buffer.data(), p, size);
    m_buffer_len = size;
  }
}

void Sha256::process_block(const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w;
  for (std::size_t t = 0; t < 16; ++t) {
    w[t] = load_be32(block + 4 * t);
  }
  for (std::size_t t = 16; t < 64; ++t) {
    const std::uint32_t s0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }

  auto [a, b, c, d, e, f, g, h] = m_h;
  for (std::size_t t = 0; t < 64; ++t) {
    const std::uint32_t s1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + s1 + ch + kRoundConstants[t] + w[t];
    const std::uint32_t s0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  m_h[0] += a;
  m_h[1] += b;
  m_h[2] += c;
  m_h[3] += d;
  m_h[4] += e;
  m_h[5] += f;
  m_h[6] += g;
  m_h[7] += h;
}

std::array<std::uint8_t, 32> Sha256::digest() {
  // Padding: a 1 bit, zeros up to 56 mod 64 bytes, then the message length in bits (big-endian).
  const std::uint64_t bit_len = m_total_len * 8;
  m_buffer[m_buffer_len++] = 0x80;
  if (m_buffer_len > 56) {
    std::memset(m_buffer.data() + m_buffer_len, 0, m_buffer.size() - m_buffer_len);
    process_block(m_buffer.data());
    m_buffer_len = 0;
  }
  std::memset(m_buffer.data() + m_buffer_len, 0, 56 - m_buffer_len);
  for (std::size_t i = 0; i < 8; ++i) {
    m_buffer[56 + i] = static_cast<std::uint8_t>(bit_len >> (56 - 8 * i));
  }
  process_block(m_buffer.data());
  m_buffer_len = 0;

  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      out[4 * i + j] = static_cast<std::uint8_t>(m_h[i] >> (24 - 8 * j));
    }
  }
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto bytes = digest();
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (std::uint8_t byte : bytes) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xF]);
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.hex_digest();
}

} // namespace kbench

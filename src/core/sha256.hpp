#pragma once
// SHA-256, used to key the compile cache and to fingerprint problems and candidates.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kbench {

class Sha256 {
public:
  Sha256();
  void update(std::string_view bytes);
  void update(const void* data, std::size_t size);
  std::array<std::uint8_t, 32> digest(); // finalises; the object must not be updated afterwards
  std::string hex_digest();              // lower-case hex of digest()

private:
  void process_block(const std::uint8_t* block);
  std::array<std::uint32_t, 8> m_h;
  std::array<std::uint8_t, 64> m_buffer;
  std::size_t m_buffer_len = 0;
  std::uint64_t m_total_len = 0;
};

std::string sha256_hex(std::string_view bytes);

} // namespace kbench

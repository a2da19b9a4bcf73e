#pragma once
// The one owner of a file descriptor: it closes the fd when it goes, and it moves but never
// copies, so an fd has exactly one owner and is closed exactly once, on every path out,
// exceptions included. Between fork and exec no owner is made or destroyed: the child works
// on the ints that `get()` returned in the parent.
#include <unistd.h>
#include <utility>

namespace kbench::sandbox {

class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : m_fd(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : m_fd(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return m_fd; } // -1 when it owns none
  bool valid() const noexcept { return m_fd >= 0; }
  // Gives the fd up without closing it.
  int release() noexcept { return std::exchange(m_fd, -1); }
  // Closes the fd it owns, if any, and takes `fd`.
  void reset(int fd = -1) noexcept {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = fd;
  }

private:
  int m_fd = -1;
};

} // namespace kbench::sandbox

#include "sandbox/signals.hpp"

#include <csignal>
#include <cstring>
#include <string>

namespace kbench::sandbox {

std::string signal_name(int signal) {
  if (const char* abbrev = sigabbrev_np(signal)) {
    return std::string("SIG") + abbrev;
  }
  return "signal " + std::to_string(signal);
}

std::string signal_description(int signal) {
  switch (signal) {
  case SIGSEGV:
    return "segmentation fault: invalid memory access in native code";
  case SIGBUS:
    return "bus error: misaligned or unmapped memory access in native code";
  case SIGABRT:
    return "aborted: abort() or a failed assertion";
  case SIGFPE:
    return "arithmetic exception, for example an integer division by zero";
  case SIGILL:
    return "illegal instruction";
  case SIGKILL:
    return "killed: out of memory, or killed from outside";
  default:
    if (const char* text = sigdescr_np(signal)) {
      return text;
    }
    return "unknown signal";
  }
}

} // namespace kbench::sandbox

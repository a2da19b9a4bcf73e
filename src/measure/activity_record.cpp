#include "measure/activity_record.hpp"

#include <cstdlib>
#include <cxxabi.h>

namespace kbench::measure {

std::string_view kind_name(ActivityRecord::Kind kind) {
  switch (kind) {
  case ActivityRecord::Kind::kernel:
    return "kernel";
  case ActivityRecord::Kind::memcpy:
    return "memcpy";
  case ActivityRecord::Kind::memset:
    return "memset";
  case ActivityRecord::Kind::memory_alloc:
    return "memory_alloc";
  case ActivityRecord::Kind::memory_free:
    return "memory_free";
  }
  return "unknown";
}

std::string demangle_symbol(const char* symbol) {
  if (symbol == nullptr) {
    return {};
  }
  // Only Itanium-mangled names go to the demangler: it would otherwise turn a plain name that
  // happens to parse as a type ("i", "f") into something else.
  if (symbol[0] != '_' || symbol[1] != 'Z') {
    return symbol;
  }
  int status = 0;
  char* demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) {
    std::free(demangled);
    return symbol;
  }
  std::string result(demangled);
  std::free(demangled);
  return result;
}

const std::string& Demangler::demangle(const std::string& symbol) {
  auto it = m_names.find(symbol);
  if (it == m_names.end()) {
    it = m_names.emplace(symbol, demangle_symbol(symbol.c_str())).first;
  }
  return it->second;
}

} // namespace kbench::measure

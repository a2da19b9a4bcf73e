#pragma once
// A stored evaluation's columns as text, in one order: the header and rows of
// `kbench export --format csv`.
#include "store/store.hpp"

#include <string>
#include <vector>

namespace kbench::store {

const std::vector<std::string>& row_column_names();
// Numbers in full precision, an absent number as "", flags joined by spaces.
std::vector<std::string> row_values(const EvaluationRow& row);

} // namespace kbench::store

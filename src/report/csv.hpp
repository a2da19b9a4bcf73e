#pragma once
// CSV lines (RFC 4180) for spreadsheets. Cells are quoted where they hold a comma, a quote or a
// line break; a text cell that a spreadsheet would run as a formula (it starts with =, +, -, @,
// a tab or a carriage return and is not a number) gets a leading apostrophe, since messages
// and paths come from candidates, which are untrusted.
#include <string>
#include <vector>

namespace kbench::report {

std::string csv_cell(const std::string& value);
std::string csv_line(const std::vector<std::string>& cells); // ends with "\r\n"

} // namespace kbench::report

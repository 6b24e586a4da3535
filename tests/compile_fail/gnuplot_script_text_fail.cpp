// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A label read at run time (a result's model name, a folder) cannot become gnuplot script text:
// Script takes only string literals and numbers (report/gnuplot_text.hpp), so this must not build.
// EXPECT: no match for .*operator<<.*operand types are .*Script.* and .*string|invalid operands to binary expression
#include <string>

#include "tprimat/report/gnuplot_text.hpp"

void splice(const std::string& label_from_a_result_file) {
  tprimat::report::Script gp;
  gp << "set title \"" << label_from_a_result_file << "\"\n";
}

// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Positive control of gnuplot_script_text_fail.cpp: literals and numbers do build a Script.
#include <cstddef>

#include "tprimat/report/gnuplot_text.hpp"

void titled(std::size_t bars) {
  tprimat::report::Script gp;
  gp << "set xrange [-0.5:" << bars - 0.5 << "]\nset title \"Per-GPU throughput\"\n";
}

// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// An example binary as the generated ones are: Tiny, minimal_communication, through example_main.
#include "tprimat/bench/example_main.hpp"
#include "tprimat/model/tiny.hpp"

int main(int argc, char** argv) {
  return tprimat::bench::example_main<tprimat::model::Tiny, tprimat::parallel::Layout<1, 1>>(
      argc, argv, "minimal_communication");
}

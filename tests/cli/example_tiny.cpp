// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// An example binary as the generated ones are: Tiny, minimal_communication, through example_main.
#include "tprimat/model/tiny.hpp"
#include "cli/example_main.hpp"

int main(int argc, char** argv) {
  return tprimat::cli::example_main<tprimat::model::Tiny, tprimat::parallel::Layout<1, 1>>(
      argc, argv, "minimal_communication");
}

// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: Megatron/Primus/NeMo/torchtitan training logs as `tprimat import` reads them
// (report/import_log.hpp), each format in turn, into the result document.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "tprimat/core/error.hpp"
#include "tprimat/report/import_log.hpp"

namespace report = tprimat::report;

// The input is the log text. Bad input must end in core::InputError.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (std::string_view format : {"megatron", "primus", "nemo", "torchtitan"}) {
    report::ImportOptions o;
    o.format = std::string(format);
    o.model = format == "nemo" ? "mistral" : "llama";
    // What sets the throughput is never guessed: a log that states none of it reaches the
    // result through these (one that states others is a contradiction, also bad input).
    o.num_gpus = 8;
    o.gbs = 64;
    o.seq = 2048;
    std::istringstream in(text);
    try {
      const auto doc = report::import_log(in, "fuzz.log", o, "tprimat import fuzz.log");
      (void)doc.dump();  // what write_result does with it
    } catch (const tprimat::core::InputError&) {
    }
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: Chrome traces as `tprimat profile-summary` reads them (profile/trace_io.hpp,
// trace_reader.hpp): inflated when gzip, depth-checked, parsed, summarised and printed
// (profile/summary.hpp, summary_text.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "json_depth.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/profile/summary.hpp"
#include "tprimat/profile/summary_text.hpp"
#include "tprimat/profile/trace_io.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace profile = tprimat::profile;

// The input is the trace file's bytes, read as read_chrome_trace reads a file once it holds
// them, with a 1 MiB inflation cap for gzip (the CLI's is 1 GiB; -rss_limit_mb is 2 GiB). Bad
// input must end in core::InputError.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string text = profile::inflate_if_gzip(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", 1 << 20);
    const auto doc = tprimat::core::parse_json(text, "trace fuzz.json", "");
    tprimat::fuzz::check_depth(doc);
    const auto trace = profile::parse_chrome_trace(doc, "trace fuzz.json");
    const auto s = profile::summarize(trace);
    for (bool markdown : {false, true}) (void)profile::summary_text(s, "fuzz.json", 5, markdown);
  } catch (const tprimat::core::InputError&) {
  }
  return 0;
}

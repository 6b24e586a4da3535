// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: Chrome traces as `tprimat profile-summary` reads them (profile/trace_reader.hpp),
// then summarised and printed (profile/summary.hpp, summary_text.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tprimat/core/error.hpp"
#include "tprimat/profile/summary.hpp"
#include "tprimat/profile/summary_text.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace profile = tprimat::profile;

// The input is the trace's text. Bad input must end in core::InputError; read_chrome_trace
// turns a JSON parse error into one, so a parse error is skipped here the same way.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto doc =
      nlohmann::json::parse(reinterpret_cast<const char*>(data),
                            reinterpret_cast<const char*>(data) + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    const auto trace = profile::parse_chrome_trace(doc, "fuzz.json");
    const auto s = profile::summarize(trace);
    for (bool markdown : {false, true}) (void)profile::summary_text(s, "fuzz.json", 5, markdown);
  } catch (const tprimat::core::InputError&) {
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The one escaping of every name tprimat prints that came from outside (files, folders, traces).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tprimat::core {

/// `text` with each control character written as an escape (`\n`, `\t`, `\x1b`, `\u009b`) and
/// each byte that is not part of valid UTF-8 as '?': a name taken from a result file or a folder
/// cannot break a table's row, a data file's line, or drive the terminal.
inline std::string printable(std::string_view text) {
  std::string out;
  const auto escape = [&](const char* fmt, unsigned code) {
    char buf[8];
    std::snprintf(buf, sizeof buf, fmt, code);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else if (c < 0x20 || c == 0x7f)
        escape("\\x%02x", c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // The length a lead byte announces, and the smallest code point that length may encode.
    const std::size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                            : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4
                                                     : 0;
    unsigned code = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    bool valid = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto cont = static_cast<unsigned char>(text[i + k]);
      valid = (cont & 0xC0) == 0x80;
      code = (code << 6) | (cont & 0x3Fu);
    }
    valid = valid &&
            code >= (len == 3   ? 0x800u
                     : len == 4 ? 0x10000u
                                : 0x80u) &&
            code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
    if (!valid) {
      out += '?';
      ++i;
    } else if (code < 0xA0) {  // C1 controls: 0x9b starts a terminal escape sequence
      escape("\\u%04x", code);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace tprimat::core

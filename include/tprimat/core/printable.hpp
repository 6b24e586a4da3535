// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The one escaping of every name tprimat prints that came from outside (files, folders, traces).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tprimat::core {

/// The UTF-8 sequence at `text[i]`: its length (1 to 4) and code point; length 0 where the bytes
/// there are not valid UTF-8 (a stray continuation byte, an overlong form, a surrogate, past
/// U+10FFFF, cut off).
struct Utf8Sequence {
  std::size_t length;
  unsigned code;
};
inline Utf8Sequence utf8_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return {1, c};
  // The length a lead byte announces, and the smallest code point that length may encode.
  const std::size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                          : c >= 0xE0 && c <= 0xEF ? 3
                          : c >= 0xF0 && c <= 0xF4 ? 4
                                                   : 0;
  if (len == 0 || i + len > text.size()) return {0, 0};
  unsigned code = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
  for (std::size_t k = 1; k < len; ++k) {
    const auto cont = static_cast<unsigned char>(text[i + k]);
    if ((cont & 0xC0) != 0x80) return {0, 0};
    code = (code << 6) | (cont & 0x3Fu);
  }
  const unsigned least = len == 3 ? 0x800u : len == 4 ? 0x10000u : 0x80u;
  if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {0, 0};
  return {len, code};
}

/// Whether `text` is valid UTF-8 throughout: what a JSON string may hold.
inline bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_at(text, i).length;
    if (len == 0) return false;
    i += len;
  }
  return true;
}

/// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD, as a JSON string may
/// hold it (a log's Latin-1 data path).
inline std::string utf8_replaced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_at(text, i).length;
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

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
    const auto [len, code] = utf8_at(text, i);
    if (len == 0) {
      out += '?';
      ++i;
      continue;
    }
    if (code < 0xA0)  // C1 controls: 0x9b starts a terminal escape sequence
      escape("\\u%04x", code);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace tprimat::core

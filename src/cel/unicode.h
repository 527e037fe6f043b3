// Small UTF-8 helpers used by the CEL lexer and string functions. CEL strings
// are sequences of Unicode code points; indices in string functions count
// code points, not bytes.
#ifndef GANTRY_SRC_CEL_UNICODE_H_
#define GANTRY_SRC_CEL_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gantry::cel {

// Appends the UTF-8 encoding of code point `cp` (must be <= 0x10FFFF).
inline void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes one code point at s[*pos] and advances *pos. Returns false on an
// invalid sequence (then *pos is advanced by one byte).
inline bool DecodeUtf8(std::string_view s, size_t* pos, uint32_t* cp) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t p = *pos;
  unsigned char c = b(p);
  int n;
  uint32_t v;
  if (c < 0x80) {
    *cp = c;
    *pos = p + 1;
    return true;
  } else if ((c & 0xE0) == 0xC0) {
    n = 1;
    v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2;
    v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3;
    v = c & 0x07;
  } else {
    *pos = p + 1;
    return false;
  }
  if (p + n >= s.size()) {
    *pos = p + 1;
    return false;
  }
  for (int i = 1; i <= n; ++i) {
    if ((b(p + i) & 0xC0) != 0x80) {
      *pos = p + 1;
      return false;
    }
    v = (v << 6) | (b(p + i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *pos = p + 1;
    return false;
  }
  *cp = v;
  *pos = p + n + 1;
  return true;
}

inline bool IsValidUtf8(std::string_view s) {
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size()) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (!DecodeUtf8(s, &pos, &cp)) return false;
  }
  return true;
}

// Number of code points in valid UTF-8 `s`.
inline size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Byte offset of code point index `i` (i may equal the count, giving s.size()).
inline size_t CodePointOffset(std::string_view s, size_t i) {
  size_t n = 0;
  for (size_t p = 0; p < s.size(); ++p) {
    if ((static_cast<unsigned char>(s[p]) & 0xC0) != 0x80) {
      if (n == i) return p;
      ++n;
    }
  }
  return s.size();
}

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_UNICODE_H_

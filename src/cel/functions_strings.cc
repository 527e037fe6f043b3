// ext.Strings version 2 (the version Kubernetes enables): charAt, indexOf,
// lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim,
// join, strings.quote and format. Indices count code points.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/str_join.h"
#include "src/cel/functions.h"
#include "src/cel/unicode.h"

namespace gantry::cel {

std::string FormatDoubleGo(double d);

namespace {

bool IsStr(const Value& v) { return v.kind() == Kind::kString; }
bool IsInt(const Value& v) { return v.kind() == Kind::kInt; }

Value OutOfRange(int64_t i) { return Value::Error(StrCat("index out of range: ", i)); }

// Decodes valid UTF-8 into code points.
std::vector<uint32_t> Runes(std::string_view s) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size()) {
    if (!DecodeUtf8(s, &pos, &cp)) cp = 0xFFFD;
    out.push_back(cp);
  }
  return out;
}

Value FnCharAt(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || !IsStr(a[0]) || !IsInt(a[1])) return NoSuchOverload("charAt");
  std::string_view s = a[0].str();
  int64_t i = a[1].int_value();
  int64_t len = static_cast<int64_t>(CodePointCount(s));
  if (i < 0 || i > len) return OutOfRange(i);
  if (i == len) return Value::StringView("");
  size_t b = CodePointOffset(s, static_cast<size_t>(i));
  size_t e = CodePointOffset(s, static_cast<size_t>(i + 1));
  return Value::String(std::string(s.substr(b, e - b)));
}

// Code point index of the first occurrence of `sub` at or after `start`.
int64_t IndexOfRunes(const std::vector<uint32_t>& s, const std::vector<uint32_t>& sub, int64_t start) {
  int64_t n = static_cast<int64_t>(s.size()), m = static_cast<int64_t>(sub.size());
  for (int64_t i = start; i + m <= n; ++i) {
    if (std::equal(sub.begin(), sub.end(), s.begin() + i)) return i;
  }
  return -1;
}

Value FnIndexOf(EvalContext& ctx, const Value* a, size_t n);
Value FnLastIndexOf(EvalContext& ctx, const Value* a, size_t n);

Value StrIndexOf(const Value* a, size_t n, bool last) {
  const char* name = last ? "lastIndexOf" : "indexOf";
  if ((n != 2 && n != 3) || !IsStr(a[0]) || !IsStr(a[1]) || (n == 3 && !IsInt(a[2]))) {
    return NoSuchOverload(name);
  }
  std::vector<uint32_t> s = Runes(a[0].str()), sub = Runes(a[1].str());
  int64_t len = static_cast<int64_t>(s.size());
  int64_t m = static_cast<int64_t>(sub.size());
  if (!last) {
    int64_t start = n == 3 ? a[2].int_value() : 0;
    if (start < 0 || start > len) return OutOfRange(start);
    if (m == 0) return Value::Int(start);
    return Value::Int(IndexOfRunes(s, sub, start));
  }
  int64_t start = n == 3 ? a[2].int_value() : len;
  if (start < 0 || start > len) return OutOfRange(start);
  if (m == 0) return Value::Int(start);
  for (int64_t i = std::min(start, len - m); i >= 0; --i) {
    if (std::equal(sub.begin(), sub.end(), s.begin() + i)) return Value::Int(i);
  }
  return Value::Int(-1);
}

Value ListIndexOf(const Value* a, size_t n, bool last);

Value FnIndexOf(EvalContext&, const Value* a, size_t n) {
  if (n >= 1 && a[0].kind() == Kind::kList) return ListIndexOf(a, n, false);
  return StrIndexOf(a, n, false);
}
Value FnLastIndexOf(EvalContext&, const Value* a, size_t n) {
  if (n >= 1 && a[0].kind() == Kind::kList) return ListIndexOf(a, n, true);
  return StrIndexOf(a, n, true);
}

Value ListIndexOf(const Value* a, size_t n, bool last) {
  if (n != 2) return NoSuchOverload(last ? "lastIndexOf" : "indexOf");
  size_t sz = ListSize(a[0]);
  if (!last) {
    for (size_t i = 0; i < sz; ++i) {
      if (Equal(ListGet(a[0], i), a[1])) return Value::Int(static_cast<int64_t>(i));
    }
  } else {
    for (size_t i = sz; i-- > 0;) {
      if (Equal(ListGet(a[0], i), a[1])) return Value::Int(static_cast<int64_t>(i));
    }
  }
  return Value::Int(-1);
}

template <bool kUpper>
Value FnCase(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || !IsStr(a[0])) return NoSuchOverload(kUpper ? "upperAscii" : "lowerAscii");
  std::string s(a[0].str());
  for (char& c : s) {
    if (kUpper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!kUpper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::String(std::move(s));
}

Value FnReplace(EvalContext& ctx, const Value* a, size_t n) {
  if ((n != 3 && n != 4) || !IsStr(a[0]) || !IsStr(a[1]) || !IsStr(a[2]) || (n == 4 && !IsInt(a[3]))) {
    return NoSuchOverload("replace");
  }
  std::string_view s = a[0].str(), from = a[1].str(), to = a[2].str();
  int64_t limit = n == 4 ? a[3].int_value() : -1;
  // Upper bound of the output size, charged before building it.
  uint64_t bound = s.size() + (static_cast<uint64_t>(s.size()) + 1) * (to.size() > from.size() ? to.size() - from.size() : 0);
  if (!ctx.Charge(bound / 10 + 1)) return CostLimitError();
  std::string out;
  int64_t done = 0;
  if (from.empty()) {
    // Insert `to` at every code point boundary (Go strings.Replace).
    size_t pos = 0;
    while (true) {
      if (limit < 0 || done < limit) {
        out.append(to);
        ++done;
      }
      if (pos >= s.size()) break;
      size_t next = pos;
      uint32_t cp;
      DecodeUtf8(s, &next, &cp);
      out.append(s.substr(pos, next - pos));
      pos = next;
    }
    return Value::String(std::move(out));
  }
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t f = (limit >= 0 && done >= limit) ? std::string_view::npos : s.find(from, pos);
    if (f == std::string_view::npos) {
      out.append(s.substr(pos));
      break;
    }
    out.append(s.substr(pos, f - pos));
    out.append(to);
    ++done;
    pos = f + from.size();
  }
  return Value::String(std::move(out));
}

Value FnSplit(EvalContext& ctx, const Value* a, size_t n) {
  if ((n != 2 && n != 3) || !IsStr(a[0]) || !IsStr(a[1]) || (n == 3 && !IsInt(a[2]))) {
    return NoSuchOverload("split");
  }
  std::string_view s = a[0].str(), sep = a[1].str();
  int64_t limit = n == 3 ? a[2].int_value() : -1;
  ctx.cost += s.size() / 10;
  std::vector<Value> out;
  if (limit == 0) return Value::List({});
  if (sep.empty()) {
    size_t pos = 0;
    while (pos < s.size()) {
      if (limit > 0 && static_cast<int64_t>(out.size()) == limit - 1) {
        out.push_back(Value::String(std::string(s.substr(pos))));
        return Value::List(std::move(out));
      }
      if (!ctx.Charge(1)) return CostLimitError();
      size_t next = pos;
      uint32_t cp;
      DecodeUtf8(s, &next, &cp);
      out.push_back(Value::String(std::string(s.substr(pos, next - pos))));
      pos = next;
    }
    return Value::List(std::move(out));
  }
  size_t pos = 0;
  while (true) {
    if (limit > 0 && static_cast<int64_t>(out.size()) == limit - 1) {
      out.push_back(Value::String(std::string(s.substr(pos))));
      break;
    }
    size_t f = s.find(sep, pos);
    if (f == std::string_view::npos) {
      out.push_back(Value::String(std::string(s.substr(pos))));
      break;
    }
    if (!ctx.Charge(1)) return CostLimitError();
    out.push_back(Value::String(std::string(s.substr(pos, f - pos))));
    pos = f + sep.size();
  }
  return Value::List(std::move(out));
}

Value FnSubstring(EvalContext&, const Value* a, size_t n) {
  if ((n != 2 && n != 3) || !IsStr(a[0]) || !IsInt(a[1]) || (n == 3 && !IsInt(a[2]))) {
    return NoSuchOverload("substring");
  }
  std::string_view s = a[0].str();
  int64_t len = static_cast<int64_t>(CodePointCount(s));
  int64_t start = a[1].int_value();
  int64_t end = n == 3 ? a[2].int_value() : len;
  if (start < 0 || start > len) return OutOfRange(start);
  if (end < 0 || end > len) return OutOfRange(end);
  if (end < start) return Value::Error(StrCat("invalid substring range. start: ", start, ", end: ", end));
  size_t b = CodePointOffset(s, static_cast<size_t>(start));
  size_t e = CodePointOffset(s, static_cast<size_t>(end));
  return Value::String(std::string(s.substr(b, e - b)));
}

bool IsUnicodeSpace(uint32_t c) {
  switch (c) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

Value FnTrim(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || !IsStr(a[0])) return NoSuchOverload("trim");
  std::vector<uint32_t> r = Runes(a[0].str());
  size_t b = 0, e = r.size();
  while (b < e && IsUnicodeSpace(r[b])) ++b;
  while (e > b && IsUnicodeSpace(r[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) AppendUtf8(out, r[i]);
  return Value::String(std::move(out));
}

Value FnJoin(EvalContext& ctx, const Value* a, size_t n) {
  if ((n != 1 && n != 2) || a[0].kind() != Kind::kList || (n == 2 && !IsStr(a[1]))) {
    return NoSuchOverload("join");
  }
  std::string_view sep = n == 2 ? a[1].str() : std::string_view();
  std::string out;
  size_t sz = ListSize(a[0]);
  for (size_t i = 0; i < sz; ++i) {
    Value e = ListGet(a[0], i);
    if (!IsStr(e)) return NoSuchOverload("join");
    if (!ctx.Charge((sep.size() + e.str().size()) / 10 + 1)) return CostLimitError();
    if (i) out.append(sep);
    out.append(e.str());
  }
  return Value::String(std::move(out));
}

Value FnQuote(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || !IsStr(a[0])) return NoSuchOverload("strings.quote");
  std::string out = "\"";
  std::string_view s = a[0].str();
  size_t pos = 0;
  while (pos < s.size()) {
    uint32_t cp;
    size_t start = pos;
    if (!DecodeUtf8(s, &pos, &cp)) {
      AppendUtf8(out, 0xFFFD);
      continue;
    }
    switch (cp) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default: out.append(s.substr(start, pos - start));
    }
  }
  out += "\"";
  return Value::String(std::move(out));
}

// ------------------------------------------------------------------- format

std::string FormatSpecialDouble(double d) {
  if (std::isnan(d)) return "NaN";
  return d > 0 ? "Infinity" : "-Infinity";
}

// %s rendering of a value; false when the type is not supported.
bool FormatString(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Kind::kString: out->append(v.str()); return true;
    case Kind::kBytes: out->append(v.str()); return true;
    case Kind::kDouble:
      if (std::isnan(v.double_value()) || std::isinf(v.double_value())) {
        out->append(FormatSpecialDouble(v.double_value()));
      } else {
        out->append(FormatDoubleGo(v.double_value()));
      }
      return true;
    case Kind::kList: {
      out->append("[");
      size_t sz = ListSize(v);
      for (size_t i = 0; i < sz; ++i) {
        if (i) out->append(", ");
        if (!FormatString(ListGet(v, i), out)) return false;
      }
      out->append("]");
      return true;
    }
    case Kind::kMap: {
      std::vector<std::pair<std::string, std::string>> entries;
      size_t sz = MapSize(v);
      for (size_t i = 0; i < sz; ++i) {
        std::string k, val;
        if (!FormatString(MapKeyAt(v, i), &k) || !FormatString(MapValueAt(v, i), &val)) return false;
        entries.emplace_back(std::move(k), std::move(val));
      }
      std::sort(entries.begin(), entries.end());
      out->append("{");
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out->append(", ");
        StrAppend(out, entries[i].first, ": ", entries[i].second);
      }
      out->append("}");
      return true;
    }
    default: {
      Value s = StringValueOf(v);
      if (s.is_error()) return false;
      out->append(s.str());
      return true;
    }
  }
}

std::string ToBase(uint64_t v, int base, bool upper) {
  if (v == 0) return "0";
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string s;
  while (v) {
    s.push_back(digits[v % base]);
    v /= base;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

Value FormatError(std::string msg) { return Value::Error(std::move(msg)); }

Value FnFormat(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || !IsStr(a[0]) || a[1].kind() != Kind::kList) return NoSuchOverload("format");
  std::string_view f = a[0].str();
  const Value& args = a[1];
  size_t nargs = ListSize(args);
  size_t next = 0;
  std::string out;
  ctx.cost += f.size() / 10;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= f.size()) return FormatError("unexpected end of format string");
    if (f[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    ++i;
    int precision = -1;
    if (f[i] == '.') {
      ++i;
      precision = 0;
      while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
        precision = precision * 10 + (f[i] - '0');
        if (precision > 1000) return FormatError("precision too large");
        ++i;
      }
      if (i >= f.size()) return FormatError("unexpected end of format string");
    }
    char verb = f[i];
    if (next >= nargs) {
      return FormatError(StrCat("index ", next, " out of range"));
    }
    Value arg = ListGet(args, next++);
    if (!ctx.Charge(out.size() / 10 + 1) || out.size() > (64u << 20)) return CostLimitError();
    switch (verb) {
      case 's':
        if (!FormatString(arg, &out)) return FormatError(StrCat("error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ", TypeName(arg)));
        break;
      case 'd':
        if (arg.kind() == Kind::kInt) StrAppend(&out, arg.int_value());
        else if (arg.kind() == Kind::kUint) StrAppend(&out, arg.uint_value());
        else if (arg.kind() == Kind::kDouble && (std::isnan(arg.double_value()) || std::isinf(arg.double_value()))) {
          out.append(FormatSpecialDouble(arg.double_value()));
        } else {
          return FormatError(StrCat("error during formatting: decimal clause can only be used on integers, was given ", TypeName(arg)));
        }
        break;
      case 'f':
      case 'e': {
        double d;
        if (arg.kind() == Kind::kDouble) d = arg.double_value();
        else if (arg.kind() == Kind::kInt) d = static_cast<double>(arg.int_value());
        else if (arg.kind() == Kind::kUint) d = static_cast<double>(arg.uint_value());
        else return FormatError(StrCat("error during formatting: ", verb == 'f' ? "fixed-point" : "scientific", " clause can only be used on doubles, was given ", TypeName(arg)));
        if (std::isnan(d) || std::isinf(d)) {
          out.append(FormatSpecialDouble(d));
          break;
        }
        char buf[1400];
        std::snprintf(buf, sizeof(buf), verb == 'f' ? "%.*f" : "%.*e", precision < 0 ? 6 : precision, d);
        out.append(buf);
        break;
      }
      case 'b':
      case 'o': {
        int base = verb == 'b' ? 2 : 8;
        if (arg.kind() == Kind::kInt) {
          int64_t v = arg.int_value();
          if (v < 0) out.push_back('-');
          out.append(ToBase(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), base, false));
        } else if (arg.kind() == Kind::kUint) {
          out.append(ToBase(arg.uint_value(), base, false));
        } else if (verb == 'b' && arg.kind() == Kind::kBool) {
          out.append(arg.bool_value() ? "1" : "0");
        } else {
          return FormatError(StrCat("error during formatting: ", verb == 'b' ? "binary" : "octal", " clause can only be used on integers", verb == 'b' ? " and bools" : "", ", was given ", TypeName(arg)));
        }
        break;
      }
      case 'x':
      case 'X': {
        bool upper = verb == 'X';
        if (arg.kind() == Kind::kInt) {
          int64_t v = arg.int_value();
          if (v < 0) out.push_back('-');
          out.append(ToBase(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), 16, upper));
        } else if (arg.kind() == Kind::kUint) {
          out.append(ToBase(arg.uint_value(), 16, upper));
        } else if (arg.kind() == Kind::kString || arg.kind() == Kind::kBytes) {
          for (unsigned char ch : arg.str()) {
            const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
            out.push_back(digits[ch >> 4]);
            out.push_back(digits[ch & 15]);
          }
        } else {
          return FormatError(StrCat("error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ", TypeName(arg)));
        }
        break;
      }
      default:
        return FormatError(StrCat("could not parse formatting clause: unrecognized formatting clause \"", std::string(1, verb), "\""));
    }
  }
  return Value::String(std::move(out));
}

}  // namespace

void RegisterStringsLibrary(FunctionRegistry& r) {
  r.Add("charAt", "string.(int) -> string", FnCharAt);
  r.Add("indexOf", "string.(string) -> int", FnIndexOf);
  r.Add("indexOf", "string.(string, int) -> int", FnIndexOf);
  r.Add("lastIndexOf", "string.(string) -> int", FnLastIndexOf);
  r.Add("lastIndexOf", "string.(string, int) -> int", FnLastIndexOf);
  r.Add("lowerAscii", "string.() -> string", FnCase<false>);
  r.Add("upperAscii", "string.() -> string", FnCase<true>);
  r.Add("replace", "string.(string, string) -> string", FnReplace);
  r.Add("replace", "string.(string, string, int) -> string", FnReplace);
  r.Add("split", "string.(string) -> list(string)", FnSplit);
  r.Add("split", "string.(string, int) -> list(string)", FnSplit);
  r.Add("substring", "string.(int) -> string", FnSubstring);
  r.Add("substring", "string.(int, int) -> string", FnSubstring);
  r.Add("trim", "string.() -> string", FnTrim);
  r.Add("join", "list(string).() -> string", FnJoin);
  r.Add("join", "list(string).(string) -> string", FnJoin);
  r.Add("strings.quote", "(string) -> string", FnQuote);
  r.Add("format", "string.(list(dyn)) -> string", FnFormat);
  // k8s Lists library: indexOf / lastIndexOf on lists share the dispatchers.
  r.Add("indexOf", "list(A).(A) -> int", nullptr);
  r.Add("lastIndexOf", "list(A).(A) -> int", nullptr);
}

}  // namespace gantry::cel

// Type helpers and the signature mini-language. See types.h.
#include "src/cel/types.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/str_join.h"

namespace gantry::cel {

bool operator==(const Type& a, const Type& b) {
  return a.kind == b.kind && a.name == b.name && a.params == b.params;
}

std::string FormatType(const Type& t) {
  switch (t.kind) {
    case TypeKind::kDyn: return "dyn";
    case TypeKind::kNull: return "null_type";
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return "int";
    case TypeKind::kUint: return "uint";
    case TypeKind::kDouble: return "double";
    case TypeKind::kString: return "string";
    case TypeKind::kBytes: return "bytes";
    case TypeKind::kList: return StrCat("list(", FormatType(t.params[0]), ")");
    case TypeKind::kMap:
      return StrCat("map(", FormatType(t.params[0]), ", ", FormatType(t.params[1]), ")");
    case TypeKind::kType: return StrCat("type(", FormatType(t.params[0]), ")");
    case TypeKind::kOptional: return StrCat("optional_type(", FormatType(t.params[0]), ")");
    case TypeKind::kOpaque:
    case TypeKind::kObject:
    case TypeKind::kParam: return t.name;
    case TypeKind::kError: return "*error*";
  }
  return "?";
}

namespace {

struct SpecParser {
  std::string_view s;
  size_t pos = 0;

  void Skip() {
    while (pos < s.size() && s[pos] == ' ') ++pos;
  }
  std::string_view Word() {
    Skip();
    size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_' ||
                              (s[pos] == '.' && pos + 1 < s.size() && s[pos + 1] != '('))) {
      ++pos;
    }
    return s.substr(start, pos - start);
  }
  bool Eat(char c) {
    Skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  Type ParseType() {
    std::string_view w = Word();
    if (w.empty()) std::abort();
    if (w == "dyn") return Type::Dyn();
    if (w == "null") return Type::Of(TypeKind::kNull);
    if (w == "bool") return Type::Of(TypeKind::kBool);
    if (w == "int") return Type::Of(TypeKind::kInt);
    if (w == "uint") return Type::Of(TypeKind::kUint);
    if (w == "double") return Type::Of(TypeKind::kDouble);
    if (w == "string") return Type::Of(TypeKind::kString);
    if (w == "bytes") return Type::Of(TypeKind::kBytes);
    if (w == "Quantity") return Type::Opaque("kubernetes.Quantity");
    if (w == "Semver") return Type::Opaque("kubernetes.Semver");
    if (w == "list" || w == "type" || w == "optional") {
      if (!Eat('(')) std::abort();
      Type inner = ParseType();
      if (!Eat(')')) std::abort();
      if (w == "list") return Type::List(inner);
      if (w == "type") return Type::TypeOf(inner);
      return Type::Optional(inner);
    }
    if (w == "map") {
      if (!Eat('(')) std::abort();
      Type k = ParseType();
      if (!Eat(',')) std::abort();
      Type v = ParseType();
      if (!Eat(')')) std::abort();
      return Type::Map(k, v);
    }
    if (w.size() == 1 && w[0] >= 'A' && w[0] <= 'Z') return Type::Param(std::string(w));
    std::abort();
  }
};

}  // namespace

Type ParseTypeSpec(std::string_view spec) {
  SpecParser p{spec};
  return p.ParseType();
}

Signature ParseSignature(std::string_view spec) {
  SpecParser p{spec};
  Signature sig;
  p.Skip();
  if (!p.Eat('(')) {
    sig.member = true;
    sig.args.push_back(p.ParseType());
    if (!p.Eat('.') || !p.Eat('(')) std::abort();
  }
  if (!p.Eat(')')) {
    do {
      sig.args.push_back(p.ParseType());
    } while (p.Eat(','));
    if (!p.Eat(')')) std::abort();
  }
  p.Skip();
  if (!p.Eat('-') || !p.Eat('>')) std::abort();
  sig.result = p.ParseType();
  return sig;
}

}  // namespace gantry::cel

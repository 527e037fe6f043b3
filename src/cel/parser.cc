// CEL lexer and recursive-descent parser. See parser.h for the contract.
#include "src/cel/parser.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "src/cel/unicode.h"

namespace gantry::cel {
namespace {

enum class Tok : uint8_t {
  kEof, kIdent, kQuotedIdent, kInt, kUint, kDouble, kString, kBytes,
  kTrue, kFalse, kNull, kIn,
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace,
  kDot, kComma, kColon, kQuestion, kQuestionDot,
  kOrOr, kAndAnd, kNot, kEq, kNe, kLt, kLe, kGt, kGe,
  kPlus, kMinus, kStar, kSlash, kPercent,
  kError,
};

struct Token {
  Tok kind = Tok::kEof;
  int offset = 0;
  std::string text;  // identifier, raw number text, decoded string, or error message
};

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexVal(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

bool IsReserved(std::string_view s) {
  static constexpr std::string_view kReserved[] = {
      "as", "break", "const", "continue", "else", "for", "function", "if", "import",
      "let", "loop", "package", "namespace", "return", "var", "void", "while"};
  for (auto r : kReserved) {
    if (r == s) return true;
  }
  return false;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token Next() {
    SkipSpace();
    Token t;
    t.offset = static_cast<int>(pos_);
    if (pos_ >= src_.size()) {
      t.kind = Tok::kEof;
      return t;
    }
    char c = src_[pos_];
    // String prefixes.
    if (c == 'r' || c == 'R' || c == 'b' || c == 'B') {
      size_t p = pos_;
      bool raw = false, bytes = false;
      for (int i = 0; i < 2 && p < src_.size(); ++i) {
        char pc = src_[p];
        if ((pc == 'r' || pc == 'R') && !raw) {
          raw = true;
          ++p;
        } else if ((pc == 'b' || pc == 'B') && !bytes) {
          bytes = true;
          ++p;
        } else {
          break;
        }
      }
      if (p < src_.size() && (src_[p] == '"' || src_[p] == '\'')) {
        pos_ = p;
        return LexString(t.offset, raw, bytes);
      }
    }
    if (IsIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < src_.size() && (IsIdentStart(src_[pos_]) || IsDigit(src_[pos_]))) ++pos_;
      t.text = std::string(src_.substr(start, pos_ - start));
      if (t.text == "true") t.kind = Tok::kTrue;
      else if (t.text == "false") t.kind = Tok::kFalse;
      else if (t.text == "null") t.kind = Tok::kNull;
      else if (t.text == "in") t.kind = Tok::kIn;
      else t.kind = Tok::kIdent;
      return t;
    }
    if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]))) {
      return LexNumber(t.offset);
    }
    if (c == '"' || c == '\'') return LexString(t.offset, false, false);
    ++pos_;
    auto two = [&](char next, Tok yes, Tok no) {
      if (pos_ < src_.size() && src_[pos_] == next) {
        ++pos_;
        return yes;
      }
      return no;
    };
    switch (c) {
      case '(': t.kind = Tok::kLParen; break;
      case ')': t.kind = Tok::kRParen; break;
      case '[': t.kind = Tok::kLBracket; break;
      case ']': t.kind = Tok::kRBracket; break;
      case '{': t.kind = Tok::kLBrace; break;
      case '}': t.kind = Tok::kRBrace; break;
      case '.': t.kind = two('?', Tok::kQuestionDot, Tok::kDot); break;
      case ',': t.kind = Tok::kComma; break;
      case ':': t.kind = Tok::kColon; break;
      case '?': t.kind = Tok::kQuestion; break;
      case '`': return LexQuotedIdent(t.offset);
      case '+': t.kind = Tok::kPlus; break;
      case '-': t.kind = Tok::kMinus; break;
      case '*': t.kind = Tok::kStar; break;
      case '/': t.kind = Tok::kSlash; break;
      case '%': t.kind = Tok::kPercent; break;
      case '!': t.kind = two('=', Tok::kNe, Tok::kNot); break;
      case '<': t.kind = two('=', Tok::kLe, Tok::kLt); break;
      case '>': t.kind = two('=', Tok::kGe, Tok::kGt); break;
      case '=':
        t.kind = two('=', Tok::kEq, Tok::kError);
        if (t.kind == Tok::kError) t.text = "token recognition error at: '='";
        break;
      case '|':
        t.kind = two('|', Tok::kOrOr, Tok::kError);
        if (t.kind == Tok::kError) t.text = "token recognition error at: '|'";
        break;
      case '&':
        t.kind = two('&', Tok::kAndAnd, Tok::kError);
        if (t.kind == Tok::kError) t.text = "token recognition error at: '&'";
        break;
      default: {
        t.kind = Tok::kError;
        // Show the whole UTF-8 sequence of the offending character.
        size_t start = pos_ - 1;
        while (pos_ < src_.size() && (static_cast<unsigned char>(src_[pos_]) & 0xC0) == 0x80) ++pos_;
        t.text = StrCat("token recognition error at: '", src_.substr(start, pos_ - start), "'");
      }
    }
    return t;
  }

 private:
  void SkipSpace() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  // `name` in a selection: any characters but backtick and newline.
  Token LexQuotedIdent(int offset) {
    size_t start = pos_;
    while (pos_ < src_.size() && src_[pos_] != '`' && src_[pos_] != '\n') ++pos_;
    if (pos_ >= src_.size() || src_[pos_] != '`' || pos_ == start) {
      return Error(offset, "invalid quoted identifier");
    }
    Token t;
    t.kind = Tok::kQuotedIdent;
    t.offset = offset;
    t.text = std::string(src_.substr(start, pos_ - start));
    ++pos_;
    return t;
  }

  Token Error(int offset, std::string msg) {
    Token t;
    t.kind = Tok::kError;
    t.offset = offset;
    t.text = std::move(msg);
    return t;
  }

  Token LexNumber(int offset) {
    Token t;
    t.offset = offset;
    size_t start = pos_;
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X')) {
      pos_ += 2;
      size_t digits = pos_;
      while (pos_ < src_.size() && IsHex(src_[pos_])) ++pos_;
      if (pos_ == digits) return Error(offset, "invalid hex literal");
      t.text = std::string(src_.substr(digits, pos_ - digits));
      t.kind = Tok::kInt;
      if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
        ++pos_;
        t.kind = Tok::kUint;
      }
      t.text = "0x" + t.text;
      return t;
    }
    bool is_double = false;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && IsDigit(src_[pos_ + 1])) {
      is_double = true;
      ++pos_;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && IsDigit(src_[p])) {
        is_double = true;
        pos_ = p;
        while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
      }
    }
    t.text = std::string(src_.substr(start, pos_ - start));
    if (is_double) {
      t.kind = Tok::kDouble;
    } else if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
      ++pos_;
      t.kind = Tok::kUint;
    } else {
      t.kind = Tok::kInt;
    }
    return t;
  }

  Token LexString(int offset, bool raw, bool bytes) {
    char q = src_[pos_];
    bool triple = pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q;
    pos_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) return Error(offset, "unterminated string literal");
      char c = src_[pos_];
      if (triple) {
        if (c == q && pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q) {
          pos_ += 3;
          break;
        }
      } else {
        if (c == q) {
          ++pos_;
          break;
        }
        if (c == '\n' || c == '\r') return Error(offset, "unterminated string literal");
      }
      if (c == '\\' && raw) {
        // In raw strings a backslash stays, but it still protects the quote.
        out.push_back(c);
        ++pos_;
        if (pos_ < src_.size() && (src_[pos_] == q || src_[pos_] == '\\')) {
          out.push_back(src_[pos_]);
          ++pos_;
        }
        continue;
      }
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      // Escape sequence.
      int esc_off = static_cast<int>(pos_);
      ++pos_;
      if (pos_ >= src_.size()) return Error(esc_off, "invalid escape sequence");
      char e = src_[pos_++];
      switch (e) {
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case '`': out.push_back('`'); break;
        case '?': out.push_back('?'); break;
        case 'x': case 'X': case 'u': case 'U': {
          int n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
          uint32_t v = 0;
          for (int i = 0; i < n; ++i) {
            if (pos_ >= src_.size() || !IsHex(src_[pos_])) {
              return Error(esc_off, "invalid escape sequence");
            }
            v = v * 16 + HexVal(src_[pos_++]);
          }
          if (bytes && n == 2) {
            out.push_back(static_cast<char>(v));
          } else {
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
              return Error(esc_off, "invalid unicode code point");
            }
            AppendUtf8(out, v);
          }
          break;
        }
        default:
          if (e >= '0' && e <= '3') {
            uint32_t v = e - '0';
            for (int i = 0; i < 2; ++i) {
              if (pos_ >= src_.size() || src_[pos_] < '0' || src_[pos_] > '7') {
                return Error(esc_off, "invalid escape sequence");
              }
              v = v * 8 + (src_[pos_++] - '0');
            }
            if (bytes) {
              out.push_back(static_cast<char>(v));
            } else {
              AppendUtf8(out, v);
            }
            break;
          }
          return Error(esc_off, "invalid escape sequence");
      }
    }
    Token t;
    t.offset = offset;
    t.kind = bytes ? Tok::kBytes : Tok::kString;
    if (!bytes && !IsValidUtf8(out)) return Error(offset, "invalid UTF-8 in string literal");
    t.text = std::move(out);
    return t;
  }

  std::string_view src_;
  size_t pos_ = 0;
};

struct ParseFailure {
  int offset;
  std::string message;
};

class Parser {
 public:
  Parser(std::string_view src, const ParseOptions& opts) : lex_(src), opts_(opts) { Advance(); }

  std::optional<ParseFailure> failure;

  ExprPtr ParseTop() {
    ExprPtr e = ParseExpr();
    if (!failure && tok_.kind != Tok::kEof) Fail(tok_.offset, Mismatch("<EOF>"));
    return e;
  }

 private:
  // ----- helpers -----
  void Advance() {
    tok_ = lex_.Next();
    if (tok_.kind == Tok::kError && !failure) Fail(tok_.offset, tok_.text);
  }
  void Fail(int offset, std::string msg) {
    if (!failure) failure = ParseFailure{offset, std::move(msg)};
  }
  std::string TokText(const Token& t) {
    switch (t.kind) {
      case Tok::kEof: return "<EOF>";
      case Tok::kIdent: case Tok::kInt: case Tok::kDouble: return t.text;
      case Tok::kQuotedIdent: return "`" + t.text + "`";
      case Tok::kUint: return t.text + "u";
      case Tok::kString: return "'" + t.text + "'";
      case Tok::kBytes: return "b'" + t.text + "'";
      case Tok::kTrue: return "true";
      case Tok::kFalse: return "false";
      case Tok::kNull: return "null";
      case Tok::kIn: return "in";
      case Tok::kLParen: return "(";
      case Tok::kRParen: return ")";
      case Tok::kLBracket: return "[";
      case Tok::kRBracket: return "]";
      case Tok::kLBrace: return "{";
      case Tok::kRBrace: return "}";
      case Tok::kDot: return ".";
      case Tok::kComma: return ",";
      case Tok::kColon: return ":";
      case Tok::kQuestion: return "?";
      case Tok::kQuestionDot: return ".?";
      case Tok::kOrOr: return "||";
      case Tok::kAndAnd: return "&&";
      case Tok::kNot: return "!";
      case Tok::kEq: return "==";
      case Tok::kNe: return "!=";
      case Tok::kLt: return "<";
      case Tok::kLe: return "<=";
      case Tok::kGt: return ">";
      case Tok::kGe: return ">=";
      case Tok::kPlus: return "+";
      case Tok::kMinus: return "-";
      case Tok::kStar: return "*";
      case Tok::kSlash: return "/";
      case Tok::kPercent: return "%";
      case Tok::kError: return t.text;
    }
    return "?";
  }
  std::string Mismatch(std::string_view expecting) {
    if (tok_.kind == Tok::kEof) return StrCat("mismatched input '<EOF>' expecting ", expecting);
    return StrCat("mismatched input '", TokText(tok_), "' expecting ", expecting);
  }
  bool Expect(Tok k, std::string_view what) {
    if (tok_.kind != k) {
      Fail(tok_.offset, Mismatch(StrCat("'", what, "'")));
      return false;
    }
    Advance();
    return true;
  }

  ExprPtr New(ExprKind kind, int offset) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->offset = offset;
    e->id = ++next_id_;
    return e;
  }
  // Recomputes e's depth from its children and enforces the depth limit.
  ExprPtr Finish(ExprPtr e) {
    int d = 0;
    if (e->target) d = e->target->depth;
    for (const auto& a : e->args) {
      if (a && a->depth > d) d = a->depth;
    }
    e->depth = d + 1;
    if (e->depth > opts_.max_depth) {
      Fail(e->offset, StrCat("expression recursion limit exceeded: ", opts_.max_depth));
    }
    return e;
  }
  ExprPtr Call(std::string name, int offset, std::vector<ExprPtr> args, ExprPtr target = nullptr) {
    auto e = New(ExprKind::kCall, offset);
    e->name = std::move(name);
    e->args = std::move(args);
    e->target = std::move(target);
    return Finish(std::move(e));
  }
  ExprPtr Bad() { return New(ExprKind::kConst, tok_.offset); }

  // ----- grammar -----
  ExprPtr ParseExpr() {
    if (++nesting_ > opts_.max_depth) {
      Fail(tok_.offset, StrCat("expression recursion limit exceeded: ", opts_.max_depth));
      --nesting_;
      return Bad();
    }
    ExprPtr cond = ParseOr();
    if (!failure && tok_.kind == Tok::kQuestion) {
      int off = tok_.offset;
      Advance();
      ExprPtr a = ParseOr();
      if (!failure) Expect(Tok::kColon, ":");
      ExprPtr b = failure ? Bad() : ParseExpr();
      std::vector<ExprPtr> args;
      args.push_back(std::move(cond));
      args.push_back(std::move(a));
      args.push_back(std::move(b));
      cond = Call("_?_:_", off, std::move(args));
    }
    --nesting_;
    return cond;
  }

  ExprPtr ParseOr() {
    ExprPtr first = ParseAnd();
    if (tok_.kind != Tok::kOrOr || failure) return first;
    int off = tok_.offset;
    std::vector<ExprPtr> args;
    args.push_back(std::move(first));
    while (!failure && tok_.kind == Tok::kOrOr) {
      Advance();
      args.push_back(ParseAnd());
    }
    return Call("_||_", off, std::move(args));
  }

  ExprPtr ParseAnd() {
    ExprPtr first = ParseRelation();
    if (tok_.kind != Tok::kAndAnd || failure) return first;
    int off = tok_.offset;
    std::vector<ExprPtr> args;
    args.push_back(std::move(first));
    while (!failure && tok_.kind == Tok::kAndAnd) {
      Advance();
      args.push_back(ParseRelation());
    }
    return Call("_&&_", off, std::move(args));
  }

  ExprPtr ParseRelation() {
    ExprPtr lhs = ParseAddition();
    while (!failure) {
      const char* op = nullptr;
      switch (tok_.kind) {
        case Tok::kEq: op = "_==_"; break;
        case Tok::kNe: op = "_!=_"; break;
        case Tok::kLt: op = "_<_"; break;
        case Tok::kLe: op = "_<=_"; break;
        case Tok::kGt: op = "_>_"; break;
        case Tok::kGe: op = "_>=_"; break;
        case Tok::kIn: op = "@in"; break;
        default: break;
      }
      if (op == nullptr) break;
      int off = tok_.offset;
      Advance();
      ExprPtr rhs = ParseAddition();
      std::vector<ExprPtr> args;
      args.push_back(std::move(lhs));
      args.push_back(std::move(rhs));
      lhs = Call(op, off, std::move(args));
    }
    return lhs;
  }

  ExprPtr ParseAddition() {
    ExprPtr lhs = ParseMultiplication();
    while (!failure && (tok_.kind == Tok::kPlus || tok_.kind == Tok::kMinus)) {
      const char* op = tok_.kind == Tok::kPlus ? "_+_" : "_-_";
      int off = tok_.offset;
      Advance();
      ExprPtr rhs = ParseMultiplication();
      std::vector<ExprPtr> args;
      args.push_back(std::move(lhs));
      args.push_back(std::move(rhs));
      lhs = Call(op, off, std::move(args));
    }
    return lhs;
  }

  ExprPtr ParseMultiplication() {
    ExprPtr lhs = ParseUnary();
    while (!failure && (tok_.kind == Tok::kStar || tok_.kind == Tok::kSlash ||
                        tok_.kind == Tok::kPercent)) {
      const char* op = tok_.kind == Tok::kStar ? "_*_" : (tok_.kind == Tok::kSlash ? "_/_" : "_%_");
      int off = tok_.offset;
      Advance();
      ExprPtr rhs = ParseUnary();
      std::vector<ExprPtr> args;
      args.push_back(std::move(lhs));
      args.push_back(std::move(rhs));
      lhs = Call(op, off, std::move(args));
    }
    return lhs;
  }

  ExprPtr ParseUnary() {
    if (tok_.kind == Tok::kNot) {
      int off = tok_.offset;
      int count = 0;
      while (tok_.kind == Tok::kNot) {
        ++count;
        Advance();
      }
      ExprPtr m = ParseMember();
      if (count % 2 == 0) return m;
      std::vector<ExprPtr> args;
      args.push_back(std::move(m));
      return Call("!_", off, std::move(args));
    }
    if (tok_.kind == Tok::kMinus) {
      int off = tok_.offset;
      int count = 0;
      while (tok_.kind == Tok::kMinus) {
        ++count;
        Advance();
      }
      bool negate_literal = false;
      if (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble) {
        // `-<number>` is a negative literal; the remaining minus signs apply to it.
        negate_literal = true;
        --count;
      }
      ExprPtr m = ParseMember(negate_literal);
      if (count % 2 == 0) return m;
      std::vector<ExprPtr> args;
      args.push_back(std::move(m));
      return Call("-_", off, std::move(args));
    }
    return ParseMember();
  }

  ExprPtr ParseMember(bool negate_literal = false) {
    ExprPtr e = ParsePrimary(negate_literal);
    while (!failure) {
      if (tok_.kind == Tok::kDot || tok_.kind == Tok::kQuestionDot) {
        bool opt = tok_.kind == Tok::kQuestionDot;
        int off = tok_.offset;
        Advance();
        if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kQuotedIdent) {
          Fail(tok_.offset, Mismatch("IDENTIFIER"));
          return e;
        }
        bool quoted = tok_.kind == Tok::kQuotedIdent;
        std::string name = tok_.text;
        Advance();
        if (!opt && !quoted && tok_.kind == Tok::kLParen) {
          Advance();
          std::vector<ExprPtr> args = ParseExprList(Tok::kRParen, ")");
          e = MemberCall(std::move(e), std::move(name), off, std::move(args));
          continue;
        }
        auto s = New(ExprKind::kSelect, off);
        s->name = std::move(name);
        s->optional_select = opt;
        s->target = std::move(e);
        e = Finish(std::move(s));
      } else if (tok_.kind == Tok::kLBracket) {
        int off = tok_.offset;
        Advance();
        bool opt = false;
        if (tok_.kind == Tok::kQuestion) {
          opt = true;
          Advance();
        }
        ExprPtr idx = ParseExpr();
        if (!failure) Expect(Tok::kRBracket, "]");
        std::vector<ExprPtr> args;
        args.push_back(std::move(e));
        args.push_back(std::move(idx));
        e = Call(opt ? "_[?_]" : "_[_]", off, std::move(args));
      } else {
        break;
      }
    }
    return e;
  }

  std::vector<ExprPtr> ParseExprList(Tok close, std::string_view close_text) {
    std::vector<ExprPtr> out;
    if (tok_.kind == close) {
      Advance();
      return out;
    }
    while (!failure) {
      out.push_back(ParseExpr());
      if (failure) break;
      if (tok_.kind == Tok::kComma) {
        Advance();
        continue;
      }
      Expect(close, close_text);
      break;
    }
    return out;
  }

  ExprPtr ParsePrimary(bool negate_literal) {
    int off = tok_.offset;
    switch (tok_.kind) {
      case Tok::kInt: {
        auto e = New(ExprKind::kConst, off);
        std::string text = (negate_literal ? "-" : "") + tok_.text;
        errno = 0;
        char* end = nullptr;
        bool hex = tok_.text.size() > 1 && tok_.text[1] == 'x';
        long long v;
        if (hex) {
          std::string digits = (negate_literal ? "-" : "") + tok_.text.substr(2);
          v = std::strtoll(digits.c_str(), &end, 16);
        } else {
          v = std::strtoll(text.c_str(), &end, 10);
        }
        if (errno == ERANGE) {
          Fail(off, StrCat("invalid int literal"));
        }
        e->constant.kind = ConstKind::kInt;
        e->constant.int_value = v;
        Advance();
        return e;
      }
      case Tok::kUint: {
        auto e = New(ExprKind::kConst, off);
        errno = 0;
        bool hex = tok_.text.size() > 1 && tok_.text[1] == 'x';
        char* end = nullptr;
        unsigned long long v = std::strtoull(hex ? tok_.text.c_str() + 2 : tok_.text.c_str(), &end,
                                             hex ? 16 : 10);
        if (errno == ERANGE) Fail(off, "invalid uint literal");
        e->constant.kind = ConstKind::kUint;
        e->constant.uint_value = v;
        Advance();
        return e;
      }
      case Tok::kDouble: {
        auto e = New(ExprKind::kConst, off);
        std::string text = (negate_literal ? "-" : "") + tok_.text;
        e->constant.kind = ConstKind::kDouble;
        e->constant.double_value = std::strtod(text.c_str(), nullptr);
        Advance();
        return e;
      }
      case Tok::kString:
      case Tok::kBytes: {
        auto e = New(ExprKind::kConst, off);
        e->constant.kind = tok_.kind == Tok::kString ? ConstKind::kString : ConstKind::kBytes;
        e->constant.string_value = std::move(tok_.text);
        Advance();
        return e;
      }
      case Tok::kTrue:
      case Tok::kFalse: {
        auto e = New(ExprKind::kConst, off);
        e->constant.kind = ConstKind::kBool;
        e->constant.bool_value = tok_.kind == Tok::kTrue;
        Advance();
        return e;
      }
      case Tok::kNull: {
        auto e = New(ExprKind::kConst, off);
        e->constant.kind = ConstKind::kNull;
        Advance();
        return e;
      }
      case Tok::kLParen: {
        Advance();
        ExprPtr e = ParseExpr();
        if (!failure) Expect(Tok::kRParen, ")");
        return e;
      }
      case Tok::kLBracket: {
        Advance();
        auto e = New(ExprKind::kList, off);
        if (tok_.kind == Tok::kRBracket) {
          Advance();
          return Finish(std::move(e));
        }
        while (!failure) {
          bool opt = false;
          if (tok_.kind == Tok::kQuestion) {
            opt = true;
            Advance();
          }
          e->args.push_back(ParseExpr());
          e->optional_elems.push_back(opt);
          if (failure) break;
          if (tok_.kind == Tok::kComma) {
            Advance();
            if (tok_.kind == Tok::kRBracket) {
              Advance();
              break;
            }
            continue;
          }
          Expect(Tok::kRBracket, "]");
          break;
        }
        return Finish(std::move(e));
      }
      case Tok::kLBrace: {
        Advance();
        auto e = New(ExprKind::kMap, off);
        if (tok_.kind == Tok::kRBrace) {
          Advance();
          return Finish(std::move(e));
        }
        while (!failure) {
          bool opt = false;
          if (tok_.kind == Tok::kQuestion) {
            opt = true;
            Advance();
          }
          e->args.push_back(ParseExpr());
          if (failure) break;
          if (!Expect(Tok::kColon, ":")) break;
          e->args.push_back(ParseExpr());
          e->optional_elems.push_back(opt);
          if (failure) break;
          if (tok_.kind == Tok::kComma) {
            Advance();
            if (tok_.kind == Tok::kRBrace) {
              Advance();
              break;
            }
            continue;
          }
          Expect(Tok::kRBrace, "}");
          break;
        }
        return Finish(std::move(e));
      }
      case Tok::kDot:
      case Tok::kIdent: {
        bool absolute = false;
        if (tok_.kind == Tok::kDot) {
          absolute = true;
          Advance();
          if (tok_.kind != Tok::kIdent) {
            Fail(tok_.offset, Mismatch("IDENTIFIER"));
            return Bad();
          }
        }
        std::string name = tok_.text;
        int id_off = tok_.offset;
        if (IsReserved(name)) {
          Fail(id_off, StrCat("reserved identifier: ", name));
          return Bad();
        }
        Advance();
        if (tok_.kind == Tok::kLParen) {
          Advance();
          std::vector<ExprPtr> args = ParseExprList(Tok::kRParen, ")");
          if (failure) return Bad();
          return GlobalCall(std::move(name), id_off, std::move(args));
        }
        if (tok_.kind == Tok::kLBrace) {
          Fail(tok_.offset, "message construction is not supported");
          return Bad();
        }
        auto e = New(ExprKind::kIdent, id_off);
        e->name = std::move(name);
        e->absolute = absolute;
        return e;
      }
      case Tok::kError:
        return Bad();
      default:
        Fail(off, tok_.kind == Tok::kEof
                      ? std::string("mismatched input '<EOF>' expecting an expression")
                      : StrCat("extraneous input '", TokText(tok_), "'"));
        return Bad();
    }
  }

  // ----- macros -----
  bool IdentName(const ExprPtr& e, std::string* out) {
    if (e->kind != ExprKind::kIdent || e->absolute) return false;
    *out = e->name;
    return true;
  }

  ExprPtr Comprehension(MacroKind kind, int off, ExprPtr range, std::string v1, std::string v2,
                        std::vector<ExprPtr> body, bool filter = false) {
    auto e = New(ExprKind::kComprehension, off);
    e->macro = kind;
    e->target = std::move(range);
    e->iter_var = std::move(v1);
    e->iter_var2 = std::move(v2);
    e->args = std::move(body);
    e->has_filter = filter;
    return Finish(std::move(e));
  }

  ExprPtr GlobalCall(std::string name, int off, std::vector<ExprPtr> args) {
    if (opts_.enable_macros && name == "has" && args.size() == 1) {
      ExprPtr a = std::move(args[0]);
      if (a->kind != ExprKind::kSelect || a->optional_select) {
        Fail(a->offset, "invalid argument to has() macro");
        return Bad();
      }
      a->test_only = true;
      return a;
    }
    return Call(std::move(name), off, std::move(args));
  }

  ExprPtr MemberCall(ExprPtr target, std::string name, int off, std::vector<ExprPtr> args) {
    if (!opts_.enable_macros) return Call(std::move(name), off, std::move(args), std::move(target));
    size_t n = args.size();
    auto macro1 = [&](MacroKind k, bool filter = false) -> ExprPtr {
      std::string v;
      if (!IdentName(args[0], &v)) {
        Fail(args[0]->offset, "argument must be a simple name");
        return Bad();
      }
      std::vector<ExprPtr> body;
      for (size_t i = 1; i < n; ++i) body.push_back(std::move(args[i]));
      return Comprehension(k, off, std::move(target), std::move(v), "", std::move(body), filter);
    };
    auto macro2 = [&](MacroKind k, bool filter = false) -> ExprPtr {
      std::string v1, v2;
      if (!IdentName(args[0], &v1) || !IdentName(args[1], &v2)) {
        Fail(args[0]->offset, "argument must be a simple name");
        return Bad();
      }
      if (v1 == v2) {
        Fail(args[1]->offset, "duplicate variable name: " + v1);
        return Bad();
      }
      std::vector<ExprPtr> body;
      for (size_t i = 2; i < n; ++i) body.push_back(std::move(args[i]));
      return Comprehension(k, off, std::move(target), std::move(v1), std::move(v2),
                           std::move(body), filter);
    };
    // cel.bind(var, init, body)
    if (name == "bind" && n == 3 && target->kind == ExprKind::kIdent && target->name == "cel" &&
        !target->absolute) {
      std::string v;
      if (!IdentName(args[0], &v)) {
        Fail(args[0]->offset, "cel.bind() variable name must be a simple identifier");
        return Bad();
      }
      std::vector<ExprPtr> body;
      body.push_back(std::move(args[2]));
      return Comprehension(MacroKind::kBind, off, std::move(args[1]), std::move(v), "",
                           std::move(body));
    }
    if (name == "all" || name == "exists" || name == "exists_one" || name == "existsOne") {
      MacroKind k = name == "all" ? MacroKind::kAll
                    : name == "exists" ? MacroKind::kExists : MacroKind::kExistsOne;
      if (n == 2) return macro1(k);
      if (n == 3) return macro2(k);
    }
    if (name == "map" && (n == 2 || n == 3)) return macro1(n == 2 ? MacroKind::kMap : MacroKind::kMapFilter);
    if (name == "filter" && n == 2) return macro1(MacroKind::kFilter);
    if (name == "transformList" && (n == 3 || n == 4)) return macro2(MacroKind::kTransformList, n == 4);
    if (name == "transformMap" && (n == 3 || n == 4)) return macro2(MacroKind::kTransformMap, n == 4);
    if (name == "transformMapEntry" && (n == 3 || n == 4)) {
      return macro2(MacroKind::kTransformMapEntry, n == 4);
    }
    if (name == "optMap" && n == 2) return macro1(MacroKind::kOptMap);
    if (name == "optFlatMap" && n == 2) return macro1(MacroKind::kOptFlatMap);
    if (name == "sortBy" && n == 2) return macro1(MacroKind::kSortBy);
    return Call(std::move(name), off, std::move(args), std::move(target));
  }

  Lexer lex_;
  const ParseOptions& opts_;
  Token tok_;
  int next_id_ = 0;
  int nesting_ = 0;
};

}  // namespace

std::string FormatDiagnostic(std::string_view source, int offset, std::string_view message) {
  if (offset < 0) offset = 0;
  if (static_cast<size_t>(offset) > source.size()) offset = static_cast<int>(source.size());
  int line = 1;
  size_t line_start = 0;
  for (int i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  size_t line_end = source.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = source.size();
  std::string_view text = source.substr(line_start, line_end - line_start);
  // Column counted in code points, like cel-go.
  int col = 0;
  for (size_t i = line_start; i < static_cast<size_t>(offset); ++i) {
    if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) ++col;
  }
  std::string caret(col, '.');
  caret.push_back('^');
  return StrCat("ERROR: <input>:", line, ":", col + 1, ": ", message, "\n | ", text, "\n | ",
                      caret);
}

absl::StatusOr<ExprPtr> Parse(std::string_view source, const ParseOptions& options) {
  if (source.size() > options.max_source_bytes) {
    return absl::InvalidArgumentError(
        StrCat("expression size ", source.size(), " exceeds the limit of ",
                     options.max_source_bytes, " bytes"));
  }
  if (!IsValidUtf8(source)) {
    return absl::InvalidArgumentError("expression is not valid UTF-8");
  }
  Parser p(source, options);
  ExprPtr root = p.ParseTop();
  if (p.failure) {
    return absl::InvalidArgumentError(
        FormatDiagnostic(source, p.failure->offset, StrCat("Syntax error: ", p.failure->message)));
  }
  return root;
}

}  // namespace gantry::cel

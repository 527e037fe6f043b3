#include "src/api/yaml.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "gantry/util/strings.h"
#include "simdjson.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace gantry::api {

struct YamlDocument::Impl {
  YAML::Node root;
};

YamlDocument::YamlDocument() : impl_(std::make_unique<Impl>()) {}
YamlDocument::~YamlDocument() = default;
YamlDocument::YamlDocument(YamlDocument&&) noexcept = default;
YamlDocument& YamlDocument::operator=(YamlDocument&&) noexcept = default;

namespace {

// Walks a stream's parse events and sizes every anchored node, with nested
// aliases expanded, without building the tree; each alias use adds its
// anchor's size to the totals that YamlLimits bounds. Throws BudgetExceeded
// at the first event past the budget.
class BudgetHandler : public YAML::EventHandler {
 public:
  struct BudgetExceeded {
    YAML::Mark mark;
    std::string message;
  };

  explicit BudgetHandler(const YamlLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp reports an endless run of empty documents, all at one place,
    // for a flow indicator (',') where a node should start: a document must
    // start past the previous one.
    if (documents_++ > 0 && mark.pos <= last_document_pos_) {
      throw BudgetExceeded{mark, "no YAML node can start here (a ',' outside a flow collection?)"};
    }
    last_document_pos_ = mark.pos;
    // Anchors are scoped to their document.
    anchors_.clear();
    names_.clear();
    stack_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Leaf(anchor, 0); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(anchor, static_cast<int64_t>(value.size()));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      // yaml-cpp rejects unknown anchors itself: this one is still open.
      throw BudgetExceeded{mark,
                           gantry::StrCat(AliasName(anchor), " refers to a node that contains it")};
    }
    const Size size = it->second;
    if (++aliases_ > limits_.max_aliases) {
      throw BudgetExceeded{
          mark, gantry::StrCat(AliasName(anchor), " exceeds the YAML alias budget: more than ",
                               limits_.max_aliases, " aliases")};
    }
    alias_nodes_ += size.nodes;
    if (alias_nodes_ > limits_.max_alias_nodes) {
      throw BudgetExceeded{
          mark, gantry::StrCat(AliasName(anchor),
                               " exceeds the YAML alias budget: aliases expand to more than ",
                               limits_.max_alias_nodes, " nodes")};
    }
    alias_bytes_ += size.bytes;
    if (alias_bytes_ > limits_.max_alias_bytes) {
      throw BudgetExceeded{
          mark, gantry::StrCat(AliasName(anchor),
                               " exceeds the YAML alias budget: aliases expand to more than ",
                               limits_.max_alias_bytes, " bytes")};
    }
    if (static_cast<int64_t>(stack_.size()) + size.depth > limits_.max_depth) {
      throw BudgetExceeded{mark,
                           gantry::StrCat(AliasName(anchor), " nests the document deeper than ",
                                          limits_.max_depth, " levels")};
    }
    Done(size, 0);
  }

 private:
  struct Size {
    int64_t nodes = 0;
    int64_t bytes = 0;
    int64_t depth = 0;  // levels of maps and sequences, the node's own included
  };
  struct Frame {
    Size size;
    YAML::anchor_t anchor = 0;
  };

  std::string AliasName(YAML::anchor_t anchor) const {
    auto it = names_.find(anchor);
    return it == names_.end() ? std::string("alias") : gantry::StrCat("alias *", it->second);
  }
  void Name(YAML::anchor_t anchor) {
    if (anchor != 0 && !pending_name_.empty()) names_[anchor] = pending_name_;
    pending_name_.clear();
  }
  void Leaf(YAML::anchor_t anchor, int64_t bytes) {
    Name(anchor);
    Done(Size{1, bytes, 0}, anchor);
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Name(anchor);
    if (static_cast<int64_t>(stack_.size()) >= limits_.max_depth) {
      throw BudgetExceeded{
          mark, gantry::StrCat("document nests deeper than ", limits_.max_depth, " levels")};
    }
    stack_.push_back(Frame{Size{1, 0, 0}, anchor});
  }
  void Close() {
    if (stack_.empty()) return;
    Frame f = stack_.back();
    stack_.pop_back();
    f.size.depth += 1;
    Done(f.size, f.anchor);
  }
  // Adds a finished node (or an alias use) to its parent.
  void Done(const Size& size, YAML::anchor_t anchor) {
    if (anchor != 0) anchors_[anchor] = size;
    if (stack_.empty()) return;
    Size& parent = stack_.back().size;
    parent.nodes += size.nodes;
    parent.bytes += size.bytes;
    parent.depth = std::max(parent.depth, size.depth);
  }

  const YamlLimits& limits_;
  int64_t documents_ = 0;
  int last_document_pos_ = -1;
  std::unordered_map<YAML::anchor_t, Size> anchors_;
  std::unordered_map<YAML::anchor_t, std::string> names_;
  std::string pending_name_;
  std::vector<Frame> stack_;
  int64_t aliases_ = 0;
  int64_t alias_nodes_ = 0;
  int64_t alias_bytes_ = 0;
};

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

bool IsDecimalInt(std::string_view s) {
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) i = 1;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// JSON rendering of a plain (unquoted) scalar by the YAML 1.2 core schema.
void AppendPlainScalar(std::string* out, const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    out->append("null");
    return;
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    out->append("true");
    return;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    out->append("false");
    return;
  }
  if (IsDecimalInt(s)) {
    std::string_view digits = s;
    bool neg = false;
    if (digits[0] == '+' || digits[0] == '-') {
      neg = digits[0] == '-';
      digits.remove_prefix(1);
    }
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    // Integers beyond 64 bits become floats, as Kubernetes' YAML decoder does
    // (the JSON parser would otherwise reject the whole document).
    constexpr std::string_view kMaxU64 = "18446744073709551615";
    constexpr std::string_view kMaxNeg = "9223372036854775808";
    const std::string_view limit = neg ? kMaxNeg : kMaxU64;
    if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) {
      char buf[40];
      std::snprintf(buf, sizeof(buf), "%.17g", std::strtod(s.c_str(), nullptr));
      out->append(buf);
      return;
    }
    if (neg && digits != "0") out->push_back('-');
    out->append(digits);
    return;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    // Only [0-9a-fA-F]+ / [0-7]+ after the prefix (strtoull alone would also
    // take a sign or spaces); values beyond 64 bits stay strings.
    const bool hex = s[1] == 'x';
    bool digits_ok = true;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      digits_ok &= hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : (c >= '0' && c <= '7');
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str() + 2, &end, hex ? 16 : 8);
    if (digits_ok && errno == 0 && end && *end == '\0') {
      out->append(std::to_string(v));
      return;
    }
  }
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" ||
      s == ".NaN" || s == ".NAN") {
    // JSON has no infinities; keep the text so numeric fields report a type error.
    AppendJsonString(out, s);
    return;
  }
  // Floats: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  {
    size_t i = 0;
    if (s[i] == '+' || s[i] == '-') ++i;
    size_t int_digits = 0, frac_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
    bool dot = false;
    if (i < s.size() && s[i] == '.') {
      dot = true;
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
    }
    bool exp_ok = true, has_exp = false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      has_exp = true;
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      size_t ed = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++ed;
      exp_ok = ed > 0;
    }
    if (i == s.size() && exp_ok && (int_digits + frac_digits) > 0 && (dot || has_exp)) {
      errno = 0;
      double d = std::strtod(s.c_str(), nullptr);
      if (errno == 0 && std::isfinite(d)) {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "%.17g", d);
        out->append(buf);
        return;
      }
    }
  }
  AppendJsonString(out, s);
}

// JSON text is UTF-8, and so is every string the decoders hand on: a scalar
// that is not valid UTF-8 (Latin-1 bytes, a lone surrogate read from UTF-16
// input) is an error at the scalar's position.
absl::Status CheckUtf8(const YAML::Node& node, const std::string& s) {
  if (simdjson::validate_utf8(s.data(), s.size())) return absl::OkStatus();
  const YAML::Mark m = node.Mark();
  return absl::InvalidArgumentError(
      gantry::StrCat(m.line + 1, ":", m.column + 1, ": text is not valid UTF-8"));
}

absl::Status AppendNode(std::string* out, const YAML::Node& node, int depth, int max_depth) {
  if (depth > max_depth) {
    const YAML::Mark m = node.Mark();
    return absl::InvalidArgumentError(gantry::StrCat(
        m.line + 1, ":", m.column + 1, ": document nests deeper than ", max_depth, " levels"));
  }
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out->append("null");
      return absl::OkStatus();
    case YAML::NodeType::Scalar:
      if (auto st = CheckUtf8(node, node.Scalar()); !st.ok()) return st;
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        AppendJsonString(out, node.Scalar());
      } else {
        AppendPlainScalar(out, node.Scalar());
      }
      return absl::OkStatus();
    case YAML::NodeType::Sequence: {
      out->push_back('[');
      bool first = true;
      for (const YAML::Node& item : node) {
        if (!first) out->push_back(',');
        first = false;
        if (auto st = AppendNode(out, item, depth + 1, max_depth); !st.ok()) return st;
      }
      out->push_back(']');
      return absl::OkStatus();
    }
    case YAML::NodeType::Map: {
      out->push_back('{');
      bool first = true;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          const YAML::Mark m = kv.first.Mark();
          return absl::InvalidArgumentError(
              gantry::StrCat(m.line + 1, ":", m.column + 1, ": map keys must be scalars"));
        }
        if (auto st = CheckUtf8(kv.first, kv.first.Scalar()); !st.ok()) return st;
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(out, kv.first.Scalar());
        out->push_back(':');
        if (auto st = AppendNode(out, kv.second, depth + 1, max_depth); !st.ok()) return st;
      }
      out->push_back('}');
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

SourcePosition ToPosition(const YAML::Mark& m) {
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

SourcePosition ResolveInTree(const YAML::Node& root, const std::vector<PathSegment>& path) {
  try {
    YAML::Node cur = root;
    SourcePosition pos = ToPosition(cur.Mark());
    for (const PathSegment& seg : path) {
      YAML::Node next;
      if (const size_t* index = std::get_if<size_t>(&seg)) {
        if (!cur.IsSequence() || *index >= cur.size()) break;
        next = cur[*index];
      } else {
        if (!cur.IsMap()) break;
        const std::string& key = std::get<std::string>(seg);
        bool found = false;
        for (const auto& kv : cur) {
          if (kv.first.IsScalar() && kv.first.Scalar() == key) {
            next = kv.second;
            pos = ToPosition(kv.first.Mark());
            found = true;
            break;
          }
        }
        if (!found) break;
      }
      cur.reset(next);  // operator= would assign through to the tree itself
      if (!cur.IsNull() || cur.IsScalar()) {
        SourcePosition p = ToPosition(cur.Mark());
        if (p.line > 0) pos = p;
      }
    }
    return pos;
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

SourcePosition YamlDocument::Resolve(const std::vector<PathSegment>& path) const {
  return ResolveInTree(impl_->root, path);
}

absl::Status CheckYamlBudget(std::string_view text, const YamlLimits& limits) {
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    BudgetHandler handler(limits);
    while (parser.HandleNextDocument(handler)) {
    }
  } catch (const BudgetHandler::BudgetExceeded& e) {
    return absl::InvalidArgumentError(
        gantry::StrCat(e.mark.line + 1, ":", e.mark.column + 1, ": ", e.message));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        gantry::StrCat(e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(gantry::StrCat("YAML: ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                             const YamlLimits& limits) {
  // Events first: the alias budget, and a stream yaml-cpp would never finish
  // loading (CheckYamlBudget) are refused before anything is built.
  if (absl::Status st = CheckYamlBudget(text, limits); !st.ok()) return st;
  std::vector<YamlDocument> docs;
  try {
    std::vector<YAML::Node> nodes = YAML::LoadAll(std::string(text));
    docs.reserve(nodes.size());
    for (YAML::Node& node : nodes) {
      YamlDocument doc;
      doc.empty_ = node.IsNull() || !node.IsDefined();
      doc.start_ = ToPosition(node.Mark());
      if (auto st = AppendNode(&doc.json_, node, 0, limits.max_depth); !st.ok()) return st;
      doc.impl_->root = std::move(node);
      docs.push_back(std::move(doc));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        gantry::StrCat(e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(gantry::StrCat("YAML: ", e.what()));
  }
  return docs;
}

SourcePosition ResolveJsonPosition(std::string_view json_text,
                                   const std::vector<PathSegment>& path) {
  if (json_text.find('*') != std::string_view::npos && !CheckYamlBudget(json_text).ok()) return {};
  try {
    YAML::Node root = YAML::Load(std::string(json_text));
    return ResolveInTree(root, path);
  } catch (const std::exception&) {
    return {};
  }
}

SourcePosition OffsetToPosition(std::string_view text, size_t offset) {
  SourcePosition pos{1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

}  // namespace gantry::api

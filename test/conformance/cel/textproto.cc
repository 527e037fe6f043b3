// Protobuf text-format reader. See textproto.h.
#include "test/conformance/cel/textproto.h"

#include <cctype>

#include "absl/status/status.h"
#include "gantry/util/strings.h"

namespace gantry::cel::testing {

const TextNode* TextNode::Get(std::string_view field) const {
  for (const auto& c : children) {
    if (c.name == field) return &c;
  }
  return nullptr;
}

std::vector<const TextNode*> TextNode::All(std::string_view field) const {
  std::vector<const TextNode*> out;
  for (const auto& c : children) {
    if (c.name == field) out.push_back(&c);
  }
  return out;
}

std::string_view TextNode::Str(std::string_view field) const {
  const TextNode* n = Get(field);
  return n == nullptr ? std::string_view() : std::string_view(n->scalar);
}

bool TextNode::Bool(std::string_view field) const {
  const TextNode* n = Get(field);
  return n != nullptr && (n->scalar == "true" || n->scalar == "True" || n->scalar == "1");
}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  absl::Status ParseFields(TextNode* msg, char close) {
    while (true) {
      Skip();
      if (pos_ >= s_.size()) {
        if (close == 0) return absl::OkStatus();
        return Error("unexpected end of input");
      }
      if (close != 0 && s_[pos_] == close) {
        ++pos_;
        return absl::OkStatus();
      }
      TextNode field;
      if (s_[pos_] == '[') {  // extension or Any type URL
        size_t end = s_.find(']', pos_);
        if (end == std::string_view::npos) return Error("unterminated [");
        field.name = std::string(s_.substr(pos_, end - pos_ + 1));
        pos_ = end + 1;
      } else {
        field.name = Ident();
        if (field.name.empty()) return Error("expected field name");
      }
      Skip();
      bool colon = false;
      if (pos_ < s_.size() && s_[pos_] == ':') {
        colon = true;
        ++pos_;
        Skip();
      }
      (void)colon;
      if (pos_ < s_.size() && s_[pos_] == '[') {
        ++pos_;
        Skip();
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
        } else {
          while (true) {
            TextNode item;
            item.name = field.name;
            absl::Status st = ParseValue(&item);
            if (!st.ok()) return st;
            msg->children.push_back(std::move(item));
            Skip();
            if (pos_ < s_.size() && s_[pos_] == ',') {
              ++pos_;
              continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
              ++pos_;
              break;
            }
            return Error("expected , or ]");
          }
        }
      } else {
        absl::Status st = ParseValue(&field);
        if (!st.ok()) return st;
        msg->children.push_back(std::move(field));
      }
      Skip();
      if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == ';')) ++pos_;
    }
  }

 private:
  absl::Status ParseValue(TextNode* node) {
    Skip();
    if (pos_ >= s_.size()) return Error("expected value");
    char c = s_[pos_];
    if (c == '{' || c == '<') {
      ++pos_;
      node->is_message = true;
      return ParseFields(node, c == '{' ? '}' : '>');
    }
    if (c == '"' || c == '\'') {
      node->is_string = true;
      while (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
        absl::Status st = ParseString(&node->scalar);
        if (!st.ok()) return st;
        Skip();
      }
      return absl::OkStatus();
    }
    size_t start = pos_;
    if (c == '-' || c == '+') ++pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                s_[pos_] == '_' || ((s_[pos_] == '-' || s_[pos_] == '+') &&
                                                    (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected value");
    node->scalar = std::string(s_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    char q = s_[pos_++];
    while (true) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      char c = s_[pos_++];
      if (c == q) return absl::OkStatus();
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return Error("bad escape");
      char e = s_[pos_++];
      switch (e) {
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'a': out->push_back('\a'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'v': out->push_back('\v'); break;
        case '\\': out->push_back('\\'); break;
        case '\'': out->push_back('\''); break;
        case '"': out->push_back('"'); break;
        case '?': out->push_back('?'); break;
        case 'x': case 'X': {
          int v = 0, n = 0;
          while (n < 2 && pos_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
            char h = s_[pos_++];
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            ++n;
          }
          out->push_back(static_cast<char>(v));
          break;
        }
        case 'u': case 'U': {
          int n = e == 'u' ? 4 : 8;
          uint32_t v = 0;
          for (int i = 0; i < n && pos_ < s_.size(); ++i) {
            char h = s_[pos_++];
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          }
          // UTF-8 encode.
          if (v < 0x80) {
            out->push_back(static_cast<char>(v));
          } else if (v < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (v >> 6)));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
          } else if (v < 0x10000) {
            out->push_back(static_cast<char>(0xE0 | (v >> 12)));
            out->push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xF0 | (v >> 18)));
            out->push_back(static_cast<char>(0x80 | ((v >> 12) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
          }
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int i = 0; i < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++i) {
              v = v * 8 + (s_[pos_++] - '0');
            }
            out->push_back(static_cast<char>(v));
            break;
          }
          return Error("unknown escape");
      }
    }
  }

  std::string Ident() {
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  void Skip() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  absl::Status Error(std::string_view msg) {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) line += s_[i] == '\n';
    return absl::InvalidArgumentError(StrCat("line ", line, ": ", msg));
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<TextNode> ParseTextProto(std::string_view text) {
  TextNode root;
  root.is_message = true;
  Reader r(text);
  absl::Status st = r.ParseFields(&root, 0);
  if (!st.ok()) return st;
  return root;
}

}  // namespace gantry::cel::testing

// String interning for the object model.
//
// Kubernetes objects repeat the same short strings (label keys and values,
// namespaces, node names, resource names) hundreds of thousands of times. A
// `Symbol` is a 4-byte handle to one process-wide copy of such a string.
// Equal strings always get the same Symbol, so equality is an integer compare.
// Symbols are never freed; intern only bounded vocabularies (names, keys,
// values), never free-form text such as messages.
//
// Thread safety: `Symbol::Intern` and `Symbol::Find` may be called from any
// thread; `Symbol::view()` is lock-free.
#ifndef GANTRY_SRC_API_INTERN_H_
#define GANTRY_SRC_API_INTERN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace gantry::api {

class Symbol {
 public:
  // The empty string; id 0.
  constexpr Symbol() = default;

  // Returns the symbol for `s`, creating it on first use.
  static Symbol Intern(std::string_view s);
  // Returns the symbol for `s` if it was ever interned.
  static std::optional<Symbol> Find(std::string_view s);

  std::string_view view() const;
  std::string str() const { return std::string(view()); }
  uint32_t id() const { return id_; }
  bool empty() const { return id_ == 0; }

  friend bool operator==(Symbol a, Symbol b) { return a.id_ == b.id_; }
  friend bool operator!=(Symbol a, Symbol b) { return a.id_ != b.id_; }
  // Orders by text, not by id, so sorted output is stable across runs.
  friend bool operator<(Symbol a, Symbol b) { return a.view() < b.view(); }

  template <typename H>
  friend H AbslHashValue(H h, Symbol s) {
    return H::combine(std::move(h), s.id_);
  }
  friend std::ostream& operator<<(std::ostream& os, Symbol s) { return os << s.view(); }

 private:
  explicit constexpr Symbol(uint32_t id) : id_(id) {}
  uint32_t id_ = 0;
};

// Number of distinct symbols interned so far (for metrics and tests).
size_t InternedSymbolCount();

}  // namespace gantry::api

template <>
struct std::hash<gantry::api::Symbol> {
  size_t operator()(gantry::api::Symbol s) const noexcept { return s.id(); }
};

#endif  // GANTRY_SRC_API_INTERN_H_

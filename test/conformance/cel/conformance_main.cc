// cel-spec conformance runner for Gantry's CEL engine.
//
// Usage: cel_conformance [DATA_DIR] [--divergences FILE] [--verbose] [--only NAME]
//
// Runs every test of tiers core, optional-core and k8s-ext listed in
// DATA_DIR/scope.tsv (default: $GANTRY_SHARED/conformance/cel, else the
// folder shared/conformance/cel beside the checkout). Tests listed in the divergences file
// (default: test/conformance/cel/k8s-divergences.tsv) are expected to differ
// from cel-spec because Kubernetes' environment answers differently.
// Prints one line per unexpected result and finally "N passed, N failed";
// exits non-zero on any unexpected result (including a listed divergence
// that now passes).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "src/cel/cel.h"
#include "test/conformance/cel/textproto.h"

namespace gantry::cel::testing {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t t = line.find('\t', start);
    out.push_back(line.substr(start, t == std::string::npos ? std::string::npos : t - start));
    if (t == std::string::npos) break;
    start = t + 1;
  }
  return out;
}

Type TypeFromProto(const TextNode* t) {
  if (t == nullptr) return Type::Dyn();
  if (const TextNode* p = t->Get("primitive")) {
    const std::string& s = p->scalar;
    if (s == "BOOL") return Type::Of(TypeKind::kBool);
    if (s == "INT64") return Type::Of(TypeKind::kInt);
    if (s == "UINT64") return Type::Of(TypeKind::kUint);
    if (s == "DOUBLE") return Type::Of(TypeKind::kDouble);
    if (s == "STRING") return Type::Of(TypeKind::kString);
    if (s == "BYTES") return Type::Of(TypeKind::kBytes);
  }
  if (const TextNode* l = t->Get("list_type")) return Type::List(TypeFromProto(l->Get("elem_type")));
  if (const TextNode* m = t->Get("map_type")) {
    return Type::Map(TypeFromProto(m->Get("key_type")), TypeFromProto(m->Get("value_type")));
  }
  if (t->Get("null")) return Type::Of(TypeKind::kNull);
  return Type::Dyn();
}

double ParseDouble(const std::string& s) {
  if (s == "inf" || s == "infinity" || s == "Infinity") return INFINITY;
  if (s == "-inf" || s == "-infinity" || s == "-Infinity") return -INFINITY;
  if (s == "nan" || s == "NaN") return NAN;
  return std::strtod(s.c_str(), nullptr);
}

// Converts a cel.expr.Value message; false when unsupported (objects).
bool ValueFromProto(const TextNode& v, Value* out) {
  if (v.Get("null_value")) { *out = Value::Null(); return true; }
  if (const TextNode* n = v.Get("bool_value")) { *out = Value::Bool(n->scalar == "true"); return true; }
  if (const TextNode* n = v.Get("int64_value")) { *out = Value::Int(std::strtoll(n->scalar.c_str(), nullptr, 10)); return true; }
  if (const TextNode* n = v.Get("uint64_value")) { *out = Value::Uint(std::strtoull(n->scalar.c_str(), nullptr, 10)); return true; }
  if (const TextNode* n = v.Get("double_value")) { *out = Value::Double(ParseDouble(n->scalar)); return true; }
  if (const TextNode* n = v.Get("string_value")) { *out = Value::String(n->scalar); return true; }
  if (const TextNode* n = v.Get("bytes_value")) { *out = Value::Bytes(n->scalar); return true; }
  if (const TextNode* n = v.Get("type_value")) { *out = Value::String("type:" + n->scalar); return true; }
  if (const TextNode* l = v.Get("list_value")) {
    std::vector<Value> elems;
    for (const TextNode* e : l->All("values")) {
      Value x;
      if (!ValueFromProto(*e, &x)) return false;
      elems.push_back(std::move(x));
    }
    *out = Value::List(std::move(elems));
    return true;
  }
  if (const TextNode* m = v.Get("map_value")) {
    auto data = std::make_shared<MapData>();
    for (const TextNode* e : m->All("entries")) {
      Value k, x;
      if (!e->Get("key") || !e->Get("value")) return false;
      if (!ValueFromProto(*e->Get("key"), &k) || !ValueFromProto(*e->Get("value"), &x)) return false;
      data->entries.emplace_back(std::move(k), std::move(x));
    }
    data->BuildIndex();
    *out = Value::Map(std::move(data));
    return true;
  }
  return false;
}

// Type-strict equality used to compare results with expectations.
bool SameValue(const Value& expected, const Value& actual) {
  if (expected.kind() == Kind::kString && expected.str().substr(0, 5) == "type:") {
    return actual.kind() == Kind::kType && TypeTagName(actual.type_tag()) == expected.str().substr(5);
  }
  if (expected.kind() != actual.kind()) return false;
  switch (expected.kind()) {
    case Kind::kDouble: {
      double a = expected.double_value(), b = actual.double_value();
      if (std::isnan(a) && std::isnan(b)) return true;
      return a == b;
    }
    case Kind::kList: {
      size_t n = ListSize(expected);
      if (n != ListSize(actual)) return false;
      for (size_t i = 0; i < n; ++i) {
        if (!SameValue(ListGet(expected, i), ListGet(actual, i))) return false;
      }
      return true;
    }
    case Kind::kMap: {
      size_t n = MapSize(expected);
      if (n != MapSize(actual)) return false;
      for (size_t i = 0; i < n; ++i) {
        auto v = MapFind(actual, MapKeyAt(expected, i));
        if (!v || !SameValue(MapValueAt(expected, i), *v)) return false;
      }
      return true;
    }
    default:
      return Equal(expected, actual);
  }
}

struct Outcome {
  bool pass = false;
  std::string detail;
};

Outcome RunTest(const TextNode& test) {
  Outcome o;
  std::string expr(test.Str("expr"));
  Env env = Env::Standard();
  env.check = !test.Bool("disable_check");
  env.container = std::string(test.Str("container"));
  std::vector<Value> values;
  absl::flat_hash_set<std::string> declared;
  for (const TextNode* decl : test.All("type_env")) {
    std::string name(decl->Str("name"));
    if (const TextNode* ident = decl->Get("ident")) {
      env.AddVariable(name, TypeFromProto(ident->Get("type")));
      declared.insert(name);
    }
  }
  absl::flat_hash_map<std::string, Value> bound;
  for (const TextNode* b : test.All("bindings")) {
    std::string key(b->Str("key"));
    const TextNode* ev = b->Get("value");
    const TextNode* v = ev ? ev->Get("value") : nullptr;
    Value x;
    if (v == nullptr || !ValueFromProto(*v, &x)) {
      o.detail = "unsupported binding " + key;
      return o;
    }
    bound[key] = x;
    if (!declared.contains(key)) {
      env.AddVariable(key, Type::Dyn());
      declared.insert(key);
    }
  }
  for (const auto& [name, type] : env.variables()) {
    auto it = bound.find(name);
    values.push_back(it == bound.end() ? Value::Error("unbound variable " + name) : it->second);
  }
  auto program = Compile(expr, env);
  bool want_error = test.Get("eval_error") != nullptr || test.Get("any_eval_errors") != nullptr;
  if (!program.ok()) {
    o.detail = StrCat("compile error: ", program.status().message());
    return o;
  }
  Value result = (*program)->Evaluate(values);
  if (want_error) {
    o.pass = result.is_error();
    if (!o.pass) o.detail = "expected an error, got " + DebugString(result);
    return o;
  }
  Value expected = Value::Bool(true);
  if (const TextNode* v = test.Get("value")) {
    if (!ValueFromProto(*v, &expected)) {
      o.detail = "unsupported expected value";
      return o;
    }
  }
  o.pass = SameValue(expected, result);
  if (!o.pass) o.detail = "expected " + DebugString(expected) + ", got " + DebugString(result);
  return o;
}

int Main(int argc, char** argv) {
  std::string dir, divergence_file = "test/conformance/cel/k8s-divergences.tsv", only;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verbose") verbose = true;
    else if (a == "--divergences" && i + 1 < argc) divergence_file = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else dir = a;
  }
  if (dir.empty()) {
    const char* shared = std::getenv("GANTRY_SHARED");
    dir = shared ? std::string(shared) + "/conformance/cel" : "../shared/conformance/cel";
  }
  std::string scope;
  if (!ReadFile(dir + "/scope.tsv", &scope)) {
    std::cerr << "cannot read " << dir << "/scope.tsv\n";
    return 2;
  }
  // Divergences: "file/section/test<TAB>reason".
  std::set<std::string> divergent;
  std::string div_text;
  if (ReadFile(divergence_file, &div_text)) {
    std::istringstream in(div_text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      divergent.insert(SplitTabs(line)[0]);
    }
  } else {
    std::cerr << "warning: no divergence file at " << divergence_file << "\n";
  }
  // Tests in scope, keyed by file/section/name.
  std::multiset<std::string> in_scope;
  std::set<std::string> files;
  {
    std::istringstream in(scope);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      auto cols = SplitTabs(line);
      if (cols.size() < 5) continue;
      const std::string& tier = cols[4];
      if (tier != "core" && tier != "optional-core" && tier != "k8s-ext") continue;
      in_scope.insert(cols[0] + "/" + cols[1] + "/" + cols[3]);
      files.insert(cols[0]);
    }
  }
  int passed = 0, failed = 0, diverged = 0;
  size_t seen = 0;
  std::set<std::string> unique_scope(in_scope.begin(), in_scope.end());
  for (const std::string& file : files) {
    std::string text;
    if (!ReadFile(dir + "/" + file + ".textproto", &text)) {
      std::cerr << "cannot read " << file << ".textproto\n";
      return 2;
    }
    auto root = ParseTextProto(text);
    if (!root.ok()) {
      std::cerr << file << ": " << root.status().message() << "\n";
      return 2;
    }
    for (const TextNode* section : root->All("section")) {
      std::string sname(section->Str("name"));
      for (const TextNode* test : section->All("test")) {
        std::string key = file + "/" + sname + "/" + std::string(test->Str("name"));
        if (!unique_scope.contains(key)) continue;
        if (!only.empty() && key.find(only) == std::string::npos) continue;
        ++seen;
        Outcome o = RunTest(*test);
        bool listed = divergent.contains(key);
        if (o.pass && !listed) {
          ++passed;
          if (verbose) std::cout << "PASS " << key << "\n";
        } else if (!o.pass && listed) {
          ++diverged;
          if (verbose) std::cout << "DIVERGES " << key << ": " << o.detail << "\n";
        } else if (o.pass && listed) {
          ++failed;
          std::cout << "UNEXPECTED PASS (remove from divergences) " << key << "\n";
        } else {
          ++failed;
          std::cout << "FAIL " << key << "\n  expr: " << test->Str("expr") << "\n  " << o.detail << "\n";
        }
      }
    }
  }
  if (only.empty() && seen != in_scope.size()) {
    std::cout << "FAIL: " << in_scope.size() - seen << " in-scope tests were not found in the data files\n";
    failed += static_cast<int>(in_scope.size() - seen);
  }
  std::cout << "cel conformance: " << diverged << " documented Kubernetes divergences\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace gantry::cel::testing

int main(int argc, char** argv) { return gantry::cel::testing::Main(argc, argv); }

// Semantic version parsing and precedence. See semver.h.
#include "src/cel/semver.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gantry::cel {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsIdentChars(std::string_view s) {
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool ParseNumber(std::string_view s, std::string_view what, uint64_t* out, std::string* error) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  if (!AllDigits(s)) return fail(StrCat("Invalid character(s) found in ", what, " number \"", s, "\""));
  if (s.size() > 1 && s[0] == '0') {
    std::string cap(what);
    cap[0] = static_cast<char>(cap[0] - 'a' + 'A');
    return fail(StrCat(cap, " number must not contain leading zeroes \"", s, "\""));
  }
  uint64_t v = 0;
  for (char c : s) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return fail(StrCat("value out of range: \"", s, "\""));
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// Compares two dot-separated prerelease identifier lists.
int ComparePre(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 0;
  if (a.empty()) return 1;  // release > prerelease
  if (b.empty()) return -1;
  size_t pa = 0, pb = 0;
  while (true) {
    bool enda = pa > a.size(), endb = pb > b.size();
    if (enda && endb) return 0;
    if (enda) return -1;
    if (endb) return 1;
    size_t qa = a.find('.', pa), qb = b.find('.', pb);
    if (qa == std::string_view::npos) qa = a.size();
    if (qb == std::string_view::npos) qb = b.size();
    std::string_view ia = a.substr(pa, qa - pa), ib = b.substr(pb, qb - pb);
    bool na = AllDigits(ia), nb = AllDigits(ib);
    int c = 0;
    if (na && nb) {
      if (ia.size() != ib.size()) c = ia.size() < ib.size() ? -1 : 1;
      else c = ia.compare(ib) < 0 ? -1 : (ia.compare(ib) > 0 ? 1 : 0);
    } else if (na) {
      c = -1;
    } else if (nb) {
      c = 1;
    } else {
      int r = ia.compare(ib);
      c = r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    if (c != 0) return c;
    pa = qa + 1;
    pb = qb + 1;
  }
}

}  // namespace

bool ParseSemver(std::string_view text, SemverParts* out, std::string* error) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  if (text.empty()) return fail("Version string empty");
  size_t d1 = text.find('.');
  if (d1 == std::string_view::npos) return fail("No Major.Minor.Patch elements found");
  size_t d2 = text.find('.', d1 + 1);
  if (d2 == std::string_view::npos) return fail("No Major.Minor.Patch elements found");
  SemverParts p;
  if (!ParseNumber(text.substr(0, d1), "major", &p.major, error)) return false;
  if (!ParseNumber(text.substr(d1 + 1, d2 - d1 - 1), "minor", &p.minor, error)) return false;
  std::string_view rest = text.substr(d2 + 1);
  size_t plus = rest.find('+');
  if (plus != std::string_view::npos) {
    p.build = rest.substr(plus + 1);
    rest = rest.substr(0, plus);
    if (p.build.empty()) return fail("Build meta data is empty");
    for (absl::string_view aid : absl::StrSplit(AsAbsl(p.build), '.')) {
      std::string_view id = AsStd(aid);
      if (id.empty()) return fail("Build meta data is empty");
      if (!IsIdentChars(id)) return fail(StrCat("Invalid character(s) found in build meta data \"", id, "\""));
    }
  }
  size_t dash = rest.find('-');
  if (dash != std::string_view::npos) {
    p.prerelease = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    if (p.prerelease.empty()) return fail("Prerelease is empty");
    for (absl::string_view aid : absl::StrSplit(AsAbsl(p.prerelease), '.')) {
      std::string_view id = AsStd(aid);
      if (id.empty()) return fail("Prerelease is empty");
      if (!IsIdentChars(id)) return fail(StrCat("Invalid character(s) found in prerelease \"", id, "\""));
      if (AllDigits(id) && id.size() > 1 && id[0] == '0') {
        return fail(StrCat("Numeric PreRelease version must not contain leading zeroes \"", id, "\""));
      }
    }
  }
  if (!ParseNumber(rest, "patch", &p.patch, error)) return false;
  if (out) *out = p;
  return true;
}

int CompareSemver(const SemverParts& a, const SemverParts& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return ComparePre(a.prerelease, b.prerelease);
}

absl::StatusOr<std::string> NormalizeSemver(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  std::vector<std::string> parts = absl::StrSplit(AsAbsl(s), absl::MaxSplits('.', 2));
  for (auto& part : parts) {
    size_t i = 0;
    while (i + 1 < part.size() && part[i] == '0' && part[i + 1] >= '0' && part[i + 1] <= '9') ++i;
    part.erase(0, i);
  }
  if (parts.size() < 3) {
    if (s.find_first_of("+-") != std::string_view::npos) {
      return absl::InvalidArgumentError("error parsing version: short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.push_back("0");
  }
  return absl::StrJoin(parts, ".");
}

}  // namespace gantry::cel

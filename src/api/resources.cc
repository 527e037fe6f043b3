#include "src/api/resources.h"

#include <algorithm>

#include "gantry/util/saturating.h"

namespace gantry::api {

const ResourceNames& ResourceNames::Get() {
  static const ResourceNames* names = new ResourceNames{
      Symbol::Intern("cpu"), Symbol::Intern("memory"), Symbol::Intern("ephemeral-storage"),
      Symbol::Intern("pods")};
  return *names;
}

bool IsHugePageResourceName(std::string_view name) {
  return name.starts_with( "hugepages-");
}

bool IsExtendedResourceName(std::string_view name) {
  if (name.starts_with( "requests.")) return false;
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view domain = name.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io");
}

bool IsDraExtendedResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || name.starts_with(kImplicitExtendedResourcePrefix);
}

int64_t ResourceList::Get(Symbol name) const {
  for (const ResourceAmount& r : items_) {
    if (r.name == name) return r.value;
  }
  return 0;
}

void ResourceList::Set(Symbol name, int64_t value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const ResourceAmount& r, Symbol n) { return r.name.id() < n.id(); });
  if (it != items_.end() && it->name == name) {
    it->value = value;
  } else {
    items_.insert(it, ResourceAmount{name, value});
  }
}

void ResourceList::Add(Symbol name, int64_t value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const ResourceAmount& r, Symbol n) { return r.name.id() < n.id(); });
  if (it != items_.end() && it->name == name) {
    it->value = SaturatingAdd(it->value, value);
  } else {
    items_.insert(it, ResourceAmount{name, value});
  }
}

void ResourceList::AddAll(const ResourceList& other) {
  for (const ResourceAmount& r : other.items_) Add(r.name, r.value);
}

void ResourceList::SubAll(const ResourceList& other) {
  for (const ResourceAmount& r : other.items_) {
    auto it = std::lower_bound(items_.begin(), items_.end(), r.name,
                               [](const ResourceAmount& a, Symbol n) { return a.name.id() < n.id(); });
    if (it != items_.end() && it->name == r.name) {
      it->value = SaturatingSub(it->value, r.value);
    } else {
      items_.insert(it, ResourceAmount{r.name, SaturatingSub(0, r.value)});
    }
  }
}

void ResourceList::MaxAll(const ResourceList& other) {
  for (const ResourceAmount& r : other.items_) {
    if (r.value > Get(r.name)) Set(r.name, r.value);
  }
}

bool operator==(const ResourceList& a, const ResourceList& b) {
  // Entries with value 0 are equivalent to absent ones.
  for (const ResourceAmount& r : a.items_) {
    if (b.Get(r.name) != r.value) return false;
  }
  for (const ResourceAmount& r : b.items_) {
    if (a.Get(r.name) != r.value) return false;
  }
  return true;
}

int64_t ResourceValue(Symbol name, const Quantity& q) {
  if (name == ResourceNames::Get().cpu) return q.MilliValue();
  return q.Value();
}

ResourceList DecodeResourceList(Decoder& d, JsonValue v) {
  ResourceList out;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    Symbol name = Symbol::Intern(key);
    Quantity q = d.Qty(value);
    if (d.ok() && q.Sign() < 0) {
      d.Fail("Invalid value: must be greater than or equal to 0");
    }
    out.Set(name, ResourceValue(name, q));
  });
  return out;
}

}  // namespace gantry::api

#include "src/api/intern.h"

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace gantry::api {
namespace {

// Symbols live in fixed-size chunks that never move, so readers index them
// without a lock: the chunk pointer is published with release ordering
// before any Symbol referring to it can be handed out.
constexpr uint32_t kChunkBits = 14;
constexpr uint32_t kChunkSize = 1u << kChunkBits;
constexpr uint32_t kMaxChunks = 1u << 16;

struct Table {
  absl::Mutex mu;
  absl::flat_hash_map<std::string_view, uint32_t> index ABSL_GUARDED_BY(mu);
  std::array<std::atomic<std::string_view*>, kMaxChunks> chunks{};
  std::atomic<uint32_t> size{0};

  Table() {
    auto* first = new std::string_view[kChunkSize];
    first[0] = std::string_view();
    chunks[0].store(first, std::memory_order_release);
    size.store(1, std::memory_order_release);
    index.emplace(std::string_view(), 0);
  }
};

Table& GetTable() {
  static Table* table = new Table();
  return *table;
}

}  // namespace

Symbol Symbol::Intern(std::string_view s) {
  if (s.empty()) return Symbol();
  Table& t = GetTable();
  {
    absl::ReaderMutexLock lock(&t.mu);
    auto it = t.index.find(s);
    if (it != t.index.end()) return Symbol(it->second);
  }
  absl::MutexLock lock(&t.mu);
  auto it = t.index.find(s);
  if (it != t.index.end()) return Symbol(it->second);
  const uint32_t id = t.size.load(std::memory_order_relaxed);
  const uint32_t chunk = id >> kChunkBits;
  if (chunk >= kMaxChunks) {
    // 2^30 distinct strings: the vocabulary is not bounded; refuse to grow.
    return Symbol();
  }
  std::string_view* slots = t.chunks[chunk].load(std::memory_order_acquire);
  if (slots == nullptr) {
    slots = new std::string_view[kChunkSize];
    t.chunks[chunk].store(slots, std::memory_order_release);
  }
  char* copy = new char[s.size()];
  std::memcpy(copy, s.data(), s.size());
  std::string_view stored(copy, s.size());
  slots[id & (kChunkSize - 1)] = stored;
  t.index.emplace(stored, id);
  t.size.store(id + 1, std::memory_order_release);
  return Symbol(id);
}

std::optional<Symbol> Symbol::Find(std::string_view s) {
  if (s.empty()) return Symbol();
  Table& t = GetTable();
  absl::ReaderMutexLock lock(&t.mu);
  auto it = t.index.find(s);
  if (it == t.index.end()) return std::nullopt;
  return Symbol(it->second);
}

std::string_view Symbol::view() const {
  if (id_ == 0) return std::string_view();
  const std::string_view* slots =
      GetTable().chunks[id_ >> kChunkBits].load(std::memory_order_acquire);
  return slots[id_ & (kChunkSize - 1)];
}

size_t InternedSymbolCount() { return GetTable().size.load(std::memory_order_acquire); }

}  // namespace gantry::api

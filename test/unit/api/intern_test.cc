// Symbol interning: identity, ordering, hashing and concurrent use.
#include "src/api/intern.h"

#include <atomic>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace gantry::api {
namespace {

TEST(SymbolTest, EmptyIsIdZero) {
  Symbol empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.id(), 0u);
  EXPECT_EQ(empty.view(), "");
  EXPECT_EQ(Symbol::Intern(""), empty);
  ASSERT_TRUE(Symbol::Find("").has_value());
  EXPECT_EQ(*Symbol::Find(""), empty);
}

TEST(SymbolTest, EqualStringsShareASymbol) {
  const std::string a = "intern-test/zone-a";
  std::string b = "intern-test/";
  b += "zone-a";  // a different buffer with the same text
  Symbol sa = Symbol::Intern(a);
  Symbol sb = Symbol::Intern(b);
  EXPECT_EQ(sa, sb);
  EXPECT_EQ(sa.id(), sb.id());
  EXPECT_FALSE(sa.empty());
  EXPECT_EQ(sa.view(), a);
  EXPECT_EQ(sa.str(), a);
  // The view points at the table's copy, not the caller's buffer.
  EXPECT_NE(sa.view().data(), a.data());
  EXPECT_NE(Symbol::Intern("intern-test/zone-b"), sa);
}

TEST(SymbolTest, FindDoesNotCreate) {
  const size_t before = InternedSymbolCount();
  EXPECT_FALSE(Symbol::Find("intern-test/never-interned-7f3a").has_value());
  EXPECT_EQ(InternedSymbolCount(), before);
  Symbol s = Symbol::Intern("intern-test/now-interned-7f3a");
  EXPECT_EQ(InternedSymbolCount(), before + 1);
  ASSERT_TRUE(Symbol::Find("intern-test/now-interned-7f3a").has_value());
  EXPECT_EQ(*Symbol::Find("intern-test/now-interned-7f3a"), s);
  // Interning again adds nothing.
  Symbol::Intern("intern-test/now-interned-7f3a");
  EXPECT_EQ(InternedSymbolCount(), before + 1);
}

TEST(SymbolTest, OrdersByTextNotId) {
  // Interned in reverse order so ids and text order disagree.
  Symbol z = Symbol::Intern("intern-test/order-z");
  Symbol a = Symbol::Intern("intern-test/order-a");
  EXPECT_GT(a.id(), z.id());
  EXPECT_TRUE(a < z);
  EXPECT_FALSE(z < a);
  EXPECT_TRUE(Symbol() < a);
}

TEST(SymbolTest, BinaryAndEmbeddedNulText) {
  std::string with_nul("a\0b", 3);
  Symbol s = Symbol::Intern(with_nul);
  EXPECT_EQ(s.view().size(), 3u);
  EXPECT_EQ(s.view(), with_nul);
  EXPECT_NE(s, Symbol::Intern("a"));
  std::string bytes = "\xff\xfe\x80";
  EXPECT_EQ(Symbol::Intern(bytes).view(), bytes);
}

TEST(SymbolTest, Hashing) {
  absl::flat_hash_set<Symbol> absl_set;
  std::unordered_set<Symbol> std_set;
  for (int i = 0; i < 100; ++i) {
    Symbol s = Symbol::Intern("intern-test/hash-" + std::to_string(i % 10));
    absl_set.insert(s);
    std_set.insert(s);
  }
  EXPECT_EQ(absl_set.size(), 10u);
  EXPECT_EQ(std_set.size(), 10u);
}

TEST(SymbolTest, ManySymbolsCrossChunkBoundaries) {
  // More than one 16Ki chunk of symbols; every one must read back intact.
  std::vector<Symbol> syms;
  for (int i = 0; i < 40000; ++i) syms.push_back(Symbol::Intern("intern-test/bulk-" + std::to_string(i)));
  for (int i = 0; i < 40000; ++i) {
    ASSERT_EQ(syms[i].view(), "intern-test/bulk-" + std::to_string(i));
    ASSERT_EQ(Symbol::Intern("intern-test/bulk-" + std::to_string(i)), syms[i]);
  }
}

TEST(SymbolTest, ConcurrentInterningAgrees) {
  // Threads intern overlapping vocabularies in different orders while others
  // read views; every thread must see the same Symbol for the same text.
  constexpr int kThreads = 8;
  constexpr int kWords = 20000;
  std::vector<std::vector<Symbol>> results(kThreads, std::vector<Symbol>(kWords));
  std::atomic<bool> go{false};
  std::atomic<int> bad_views{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int k = 0; k < kWords; ++k) {
        int i = (t % 2 == 0) ? k : kWords - 1 - k;
        std::string word = "intern-test/concurrent-" + std::to_string(i);
        Symbol s = Symbol::Intern(word);
        if (s.view() != word) bad_views.fetch_add(1);
        results[t][i] = s;
      }
    });
  }
  go.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad_views.load(), 0);
  for (int i = 0; i < kWords; ++i) {
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(results[t][i], results[0][i]) << i;
    ASSERT_EQ(results[0][i].view(), "intern-test/concurrent-" + std::to_string(i));
  }
  absl::flat_hash_set<uint32_t> ids;
  for (const Symbol& s : results[0]) ids.insert(s.id());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kWords));
}

TEST(SymbolTest, ConcurrentReadersDuringGrowth) {
  // Readers resolve old symbols while a writer grows the table by new chunks.
  std::vector<Symbol> old;
  for (int i = 0; i < 1000; ++i) old.push_back(Symbol::Intern("intern-test/stable-" + std::to_string(i)));
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::thread writer([&] {
    for (int i = 0; i < 50000; ++i) Symbol::Intern("intern-test/growth-" + std::to_string(i));
    done.store(true);
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      do {
        for (int i = 0; i < 1000; ++i) {
          if (old[i].view() != "intern-test/stable-" + std::to_string(i)) errors.fetch_add(1);
        }
      } while (!done.load());
    });
  }
  writer.join();
  for (auto& th : readers) th.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
}  // namespace gantry::api

// Under ThreadSanitizer, data guarded by absl::Mutex must not be reported as
// racy: without the annotations in absl_mutex_annotations.cc TSan does not
// see the distribution's abseil lock and unlock, and every case here stops
// the process with a data race report (halt_on_error).
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace {

struct Guarded {
  absl::Mutex mu;
  std::vector<int> values;  // guarded by mu; a vector so writes touch memory TSan tracks
};

struct Case {
  std::string name;
  std::function<void(Guarded&, int)> writer;
  std::function<size_t(Guarded&)> reader;
};

class TsanAnnotationsTest : public ::testing::TestWithParam<Case> {};

TEST_P(TsanAnnotationsTest, GuardedDataIsNotARace) {
  const Case& c = GetParam();
  Guarded g;
  constexpr int kThreads = 4;
  constexpr int kOps = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&g, &c, t] {
      for (int i = 0; i < kOps; ++i) {
        c.writer(g, t * kOps + i);
        (void)c.reader(g);
      }
    });
  }
  for (auto& th : threads) th.join();
  absl::MutexLock lock(&g.mu);
  EXPECT_EQ(g.values.size(), static_cast<size_t>(kThreads * kOps));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, TsanAnnotationsTest,
    ::testing::Values(
        Case{"MutexLockWriterReaderLockReader",
             [](Guarded& g, int v) {
               absl::MutexLock lock(&g.mu);
               g.values.push_back(v);
             },
             [](Guarded& g) {
               absl::ReaderMutexLock lock(&g.mu);
               return g.values.size();
             }},
        Case{"ExplicitLockUnlock",
             [](Guarded& g, int v) {
               g.mu.Lock();
               g.values.push_back(v);
               g.mu.Unlock();
             },
             [](Guarded& g) {
               g.mu.ReaderLock();
               const size_t n = g.values.size();
               g.mu.ReaderUnlock();
               return n;
             }},
        Case{"TryLockSpin",
             [](Guarded& g, int v) {
               while (!g.mu.TryLock()) std::this_thread::yield();
               g.values.push_back(v);
               g.mu.Unlock();
             },
             [](Guarded& g) {
               while (!g.mu.ReaderTryLock()) std::this_thread::yield();
               const size_t n = g.values.size();
               g.mu.ReaderUnlock();
               return n;
             }}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// A Mutex destroyed and another built at the same address must not carry the
// old one's lock state (the destructor annotation).
TEST(TsanAnnotationsTest, MutexReuseAtOneAddress) {
  for (int round = 0; round < 50; ++round) {
    auto* g = new Guarded;
    std::thread a([g] {
      absl::MutexLock lock(&g->mu);
      g->values.push_back(1);
    });
    std::thread b([g] {
      absl::MutexLock lock(&g->mu);
      g->values.push_back(2);
    });
    a.join();
    b.join();
    EXPECT_EQ(g->values.size(), 2u);
    delete g;
  }
}

}  // namespace

// ThreadSanitizer annotations for absl::Mutex, linked into every test binary
// of a GANTRY_TSAN build.
//
// The distribution's abseil is not built with -fsanitize=thread, so its
// Mutex never tells TSan when it is locked or unlocked: two threads that
// touch data under the same absl::Mutex look unsynchronized, and TSan reports
// a race that cannot happen. This file defines the Mutex entry points that
// Gantry calls (directly or through MutexLock / ReaderMutexLock). The
// executable's definitions take precedence over the shared library's; each
// one tells TSan about the lock operation and forwards to the library's own
// function, found with dlsym(RTLD_NEXT).
//
// Contract: every Mutex method Gantry code calls is either defined here or
// an inline header function that only calls these. Await, LockWhen and
// CondVar are not used by Gantry; a binary that used them would need their
// release/reacquire annotated too (tsan_annotations_test fails if a name
// below stops resolving).
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"

namespace {

#define GANTRY_STR2(x) #x
#define GANTRY_STR(x) GANTRY_STR2(x)

// Itanium-mangled name of absl::<inline namespace>::Mutex::<method>; `tail`
// is the mangled method name and parameter list, e.g. "4LockEv".
std::string MutexSymbol(const char* tail) {
  std::string ns = GANTRY_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  return "_ZN4absl" + std::to_string(ns.size()) + ns + "5Mutex" + tail;
}

template <typename Fn>
Fn Real(const char* tail) {
  const std::string name = MutexSymbol(tail);
  void* sym = dlsym(RTLD_NEXT, name.c_str());
  if (sym == nullptr) {
    std::fprintf(stderr, "tsan absl shim: %s not found: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(sym);
}

using VoidFn = void (*)(absl::Mutex*);
using BoolFn = bool (*)(absl::Mutex*);

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const VoidFn real = Real<VoidFn>("4LockEv");
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::Unlock() {
  static const VoidFn real = Real<VoidFn>("6UnlockEv");
  __tsan_mutex_pre_unlock(this, 0);
  real(this);
  __tsan_mutex_post_unlock(this, 0);
}

bool Mutex::TryLock() {
  static const BoolFn real = Real<BoolFn>("7TryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool locked = real(this);
  __tsan_mutex_post_lock(this, locked ? __tsan_mutex_try_lock : __tsan_mutex_try_lock_failed,
                         0);
  return locked;
}

void Mutex::ReaderLock() {
  static const VoidFn real = Real<VoidFn>("10ReaderLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_lock(this, __tsan_mutex_read_lock, 0);
}

void Mutex::ReaderUnlock() {
  static const VoidFn real = Real<VoidFn>("12ReaderUnlockEv");
  __tsan_mutex_pre_unlock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_unlock(this, __tsan_mutex_read_lock);
}

bool Mutex::ReaderTryLock() {
  static const BoolFn real = Real<BoolFn>("13ReaderTryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_read_lock);
  const bool locked = real(this);
  __tsan_mutex_post_lock(
      this, locked ? __tsan_mutex_try_read_lock : __tsan_mutex_try_read_lock_failed, 0);
  return locked;
}

Mutex::~Mutex() {
  static const VoidFn real = Real<VoidFn>("D2Ev");
  __tsan_mutex_destroy(this, 0);
  real(this);
}

ABSL_NAMESPACE_END
}  // namespace absl

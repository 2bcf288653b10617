// For state that belongs to one thread instead of a mutex (the node's
// control thread, a push thread): members marked GUARDED_BY(owner_) may be
// used only in a function that first calls owner_.AssertOnOwnerThread(),
// and Clang's -Wthread-safety turns a forgotten call into a compile error.
// The call itself checks at run time that it runs on the thread that
// called it first and aborts with a message otherwise: a cross-thread use
// is a bug to find at once, not a race to find in production. It costs
// one relaxed atomic load when right. (Chromium's THREAD_CHECKER, with the
// check always on.)
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "proto/mutex.h"

#define ASSERT_CAPABILITY(x) SWARMCAST_TSA(assert_capability(x))

namespace swarmcast {

class CAPABILITY("thread") ThreadChecker {
 public:
  ThreadChecker() = default;
  ThreadChecker(const ThreadChecker&) = delete;
  ThreadChecker& operator=(const ThreadChecker&) = delete;

  // The first caller's thread becomes the owner.
  void AssertOnOwnerThread() const ASSERT_CAPABILITY(this) {
    const std::thread::id me = std::this_thread::get_id();
    std::thread::id owner = owner_.load(std::memory_order_relaxed);
    if (owner == me) return;
    if (owner == std::thread::id() &&
        owner_.compare_exchange_strong(owner, me, std::memory_order_relaxed)) {
      return;
    }
    std::fputs("swarmcast: internal error: state owned by one thread used from another\n", stderr);
    std::abort();
  }

  // Whether the calling thread owns it (false before any owner was set).
  bool OnOwnerThread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  mutable std::atomic<std::thread::id> owner_{};
};

}  // namespace swarmcast

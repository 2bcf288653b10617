// A mutex, its scoped lock and a condition variable that Clang's thread
// safety analysis understands (-Wthread-safety, on in every build of our
// code): a member marked GUARDED_BY(mu_) read or written without holding
// mu_ is a compile error, not a comment. libstdc++'s std::mutex carries no
// such annotations, so these wrap it. The macros follow Clang's
// documentation (and leveldb's port/thread_annotations.h); with another
// compiler they expand to nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define SWARMCAST_TSA(x) __attribute__((x))
#else
#define SWARMCAST_TSA(x)
#endif

#define CAPABILITY(x) SWARMCAST_TSA(capability(x))
#define SCOPED_CAPABILITY SWARMCAST_TSA(scoped_lockable)
#define GUARDED_BY(x) SWARMCAST_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) SWARMCAST_TSA(pt_guarded_by(x))
#define ACQUIRE(...) SWARMCAST_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SWARMCAST_TSA(release_capability(__VA_ARGS__))
#define REQUIRES(...) SWARMCAST_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) SWARMCAST_TSA(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS SWARMCAST_TSA(no_thread_safety_analysis)

namespace swarmcast {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { m_.lock(); }
  void unlock() RELEASE() { m_.unlock(); }

 private:
  std::mutex m_;
};

// Holds `mu` for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Waits release `mu` while blocked and hold it again when they return;
// callers loop on their condition (`while (!ready_) cv_.Wait(mu_);`), so
// the condition is read where the analysis can see `mu` is held.
class CondVar {
 public:
  void Wait(Mutex& mu) REQUIRES(mu) { cv_.wait(mu); }
  // False when `timeout` passed (the condition may still be false).
  template <class Rep, class Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    return cv_.wait_for(mu, timeout) == std::cv_status::no_timeout;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  // _any: it waits on our Mutex (any BasicLockable), not a unique_lock.
  std::condition_variable_any cv_;
};

}  // namespace swarmcast

// NameThisThread: names the calling thread, so that `top -H`, `perf` and
// /proc/PID/task/TID/comm tell a node's threads apart (the push receiver,
// the push sender, the whole-file digest) instead of showing "swarmcast"
// for all of them. Linux keeps at most 15 characters; a longer name is
// refused and the thread keeps its old one, so the names here are short.
#pragma once

#include <pthread.h>

namespace swarmcast::proto {

inline void NameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace swarmcast::proto

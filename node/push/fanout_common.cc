#include "node/push/fanout_common.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace swarmcast::push::detail {

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

void Fail(FanoutTarget& t, int err) { t.error = std::error_code(err, std::generic_category()); }

bool SendHeader(const FanoutJob& job, FanoutTarget& t) {
  while (t.progress < job.header.size()) {
    const int flags = MSG_DONTWAIT | MSG_NOSIGNAL | (job.length > 0 ? MSG_MORE : 0);
    const auto rest = job.header.subspan(t.progress);
    const ssize_t n = ::send(t.socket_fd, rest.data(), rest.size(), flags);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (!WouldBlock(errno)) Fail(t, errno);
      return false;
    }
    t.progress += static_cast<std::uint64_t>(n);
  }
  return true;
}

void SendInGroups(const FanoutJob& job, std::span<FanoutTarget> targets, const ChunkStager& s) {
  const std::uint64_t header = job.header.size();
  std::vector<FanoutTarget*> ready;
  for (auto& t : targets) {
    if (t.active(job) && SendHeader(job, t) && t.active(job)) ready.push_back(&t);
  }
  // Targets at the same payload position form one group and share every
  // staged chunk; a target that blocks mid-chunk falls out of its group.
  std::sort(ready.begin(), ready.end(),
            [](const FanoutTarget* a, const FanoutTarget* b) { return a->progress < b->progress; });
  for (std::size_t first = 0; first < ready.size();) {
    std::size_t last = first;
    while (last < ready.size() && ready[last]->progress == ready[first]->progress) ++last;
    const std::span<FanoutTarget*> group(ready.data() + first, last - first);
    first = last;

    std::uint64_t pos = group[0]->progress - header;
    while (pos < job.length) {
      const auto want =
          static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, job.length - pos));
      const std::size_t staged = s.stage(job.file_offset + pos, want);
      if (staged == 0) {
        const int err = errno != 0 ? errno : ENODATA;  // 0: the file shrank
        for (auto* t : group) {
          if (t->progress == header + pos) Fail(*t, err);
        }
        break;
      }
      const bool more = pos + staged < job.length;
      bool anyone = false;
      for (auto* t : group) {
        if (t->error || t->progress != header + pos) continue;
        t->progress += s.deliver(*t, staged, more);
        anyone = anyone || (!t->error && t->progress == header + pos + staged);
      }
      s.release();
      if (!anyone) break;
      pos += staged;
    }
  }
}

}  // namespace swarmcast::push::detail

// The kmod backend: /dev/swarmfan (kmod/) sends the header and the file
// range to every socket in one ioctl, each page looked up once in the page
// cache for all of them. Its per-socket `start`/`result` pair is exactly
// our progress model, so this is a thin translation.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "kmod/include/uapi/linux/swarmfan.h"
#include "node/push/fanout_common.h"

namespace swarmcast::push {
namespace {

class KmodBackend final : public FanoutBackend {
 public:
  explicit KmodBackend(int device) : device_(device) {}
  ~KmodBackend() override { ::close(device_); }
  std::string_view name() const override { return "kmod"; }

  void Send(const FanoutJob& job, std::span<FanoutTarget> targets) override {
    // The module takes at most SWARMFAN_MAX_TARGETS sockets per call.
    std::vector<FanoutTarget*> active;
    for (auto& t : targets) {
      if (t.active(job)) active.push_back(&t);
    }
    for (std::size_t first = 0; first < active.size(); first += SWARMFAN_MAX_TARGETS) {
      const std::size_t n = std::min<std::size_t>(SWARMFAN_MAX_TARGETS, active.size() - first);
      SendBatch(job, std::span(active.data() + first, n));
    }
  }

 private:
  void SendBatch(const FanoutJob& job, std::span<FanoutTarget*> batch) {
    std::vector<swarmfan_target> k(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      k[i] = {batch[i]->socket_fd, 0, batch[i]->progress, 0};
    }
    swarmfan_send req{};
    req.version = SWARMFAN_ABI_VERSION;
    req.file_fd = job.file_fd;
    req.header_len = static_cast<__u32>(job.header.size());
    req.offset = job.file_offset;
    req.length = job.length;
    req.header = reinterpret_cast<__u64>(job.header.data());
    req.targets = reinterpret_cast<__u64>(k.data());
    req.nr_targets = static_cast<__u32>(k.size());
    const int rc = ::ioctl(device_, SWARMFAN_IOC_SEND, &req);
    const int err = rc < 0 ? errno : 0;
    // Before sending starts, a failed call leaves the results untouched
    // (zero here); afterwards every result says how far its socket got.
    const bool started = rc >= 0 || err == EINTR || err == ENODATA || err == EIO || err == ENOMEM;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      FanoutTarget& t = *batch[i];
      if (!started) {
        detail::Fail(t, err);
        continue;
      }
      if (k[i].result < 0) {
        detail::Fail(t, static_cast<int>(-k[i].result));
        continue;
      }
      t.progress += static_cast<std::uint64_t>(k[i].result);
      // A signal only interrupts; a file or memory error dooms whoever is
      // not finished.
      if (rc < 0 && err != EINTR && t.active(job)) detail::Fail(t, err);
    }
  }

  int device_;
};

}  // namespace

BackendResult MakeKmodBackend() {
  const int device = ::open(SWARMFAN_DEVICE, O_RDWR | O_CLOEXEC);
  if (device < 0) return Unexpected(std::error_code(errno, std::generic_category()));
  return BackendResult(std::make_unique<KmodBackend>(device));
}

}  // namespace swarmcast::push

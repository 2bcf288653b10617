// The sendfile backend: one sendfile() per socket, as the seed papers'
// baseline does. Zero-copy, but every socket walks the page cache itself.
#include <sys/sendfile.h>

#include <cerrno>

#include "node/push/fanout_common.h"

namespace swarmcast::push {
namespace {

class SendfileBackend final : public FanoutBackend {
 public:
  std::string_view name() const override { return "sendfile"; }

  void Send(const FanoutJob& job, std::span<FanoutTarget> targets) override {
    for (auto& t : targets) {
      if (!t.active(job) || !detail::SendHeader(job, t)) continue;
      while (t.progress < job.total()) {
        off_t offset = static_cast<off_t>(job.file_offset + t.progress - job.header.size());
        const ssize_t n = ::sendfile(t.socket_fd, job.file_fd, &offset,
                                     static_cast<std::size_t>(job.total() - t.progress));
        if (n < 0) {
          if (errno == EINTR) continue;
          if (!detail::WouldBlock(errno)) detail::Fail(t, errno);
          break;
        }
        if (n == 0) {  // the file ended early: it shrank under us
          detail::Fail(t, ENODATA);
          break;
        }
        t.progress += static_cast<std::uint64_t>(n);
      }
    }
  }
};

}  // namespace

std::unique_ptr<FanoutBackend> MakeSendfileBackend() { return std::make_unique<SendfileBackend>(); }

}  // namespace swarmcast::push

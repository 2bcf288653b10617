// The copy backend: the baseline every zero-copy path is measured against.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "node/push/fanout_common.h"

namespace swarmcast::push {
namespace {

class CopyBackend final : public FanoutBackend {
 public:
  CopyBackend() : buffer_(std::make_unique<std::byte[]>(detail::kChunkBytes)) {}
  std::string_view name() const override { return "copy"; }

  void Send(const FanoutJob& job, std::span<FanoutTarget> targets) override {
    detail::ChunkStager s;
    s.stage = [&](std::uint64_t offset, std::size_t n) -> std::size_t {
      std::size_t got = 0;
      while (got < n) {
        const ssize_t r =
            ::pread(job.file_fd, buffer_.get() + got, n - got, static_cast<off_t>(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          if (r == 0) errno = ENODATA;
          return 0;
        }
        got += static_cast<std::size_t>(r);
      }
      return got;
    };
    s.deliver = [&](FanoutTarget& t, std::size_t n, bool more) -> std::size_t {
      std::size_t sent = 0;
      while (sent < n) {
        const int flags = MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0);
        const ssize_t r = ::send(t.socket_fd, buffer_.get() + sent, n - sent, flags);
        if (r < 0) {
          if (errno == EINTR) continue;
          if (!detail::WouldBlock(errno)) detail::Fail(t, errno);
          break;
        }
        sent += static_cast<std::size_t>(r);
      }
      return sent;
    };
    s.release = [] {};
    errno = 0;
    detail::SendInGroups(job, targets, s);
  }

 private:
  std::unique_ptr<std::byte[]> buffer_;
};

}  // namespace

std::unique_ptr<FanoutBackend> MakeCopyBackend() { return std::make_unique<CopyBackend>(); }

}  // namespace swarmcast::push

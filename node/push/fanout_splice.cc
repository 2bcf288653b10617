// The splice backend: zero-copy in user space. Each chunk of the file is
// spliced into a source pipe once (one page-cache lookup), tee()d — page
// references, not bytes — into a delivery pipe per socket, and spliced from
// there into the socket.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "node/push/fanout_common.h"

namespace swarmcast::push {
namespace {

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) {
      fds_[0] = fds_[1] = -1;
      return;
    }
    // A chunk must fit in one pipe; 1 MiB is the default pipe-max-size.
    ::fcntl(fds_[1], F_SETPIPE_SZ, static_cast<int>(detail::kChunkBytes));
  }
  ~Pipe() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  bool ok() const { return fds_[0] >= 0; }
  std::size_t capacity() const {
    const int size = ::fcntl(fds_[1], F_GETPIPE_SZ);
    return size > 0 ? static_cast<std::size_t>(size) : 0;
  }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }

 private:
  int fds_[2];
};

class SpliceBackend final : public FanoutBackend {
 public:
  explicit SpliceBackend(int devnull) : devnull_(devnull) {}
  ~SpliceBackend() override { ::close(devnull_); }

  bool ok() const {
    return source_.ok() && delivery_.ok() && source_.capacity() >= detail::kChunkBytes &&
           delivery_.capacity() >= detail::kChunkBytes;
  }
  std::string_view name() const override { return "splice"; }

  void Send(const FanoutJob& job, std::span<FanoutTarget> targets) override {
    detail::ChunkStager s;
    std::size_t staged = 0;
    s.stage = [&](std::uint64_t offset, std::size_t n) -> std::size_t {
      // One splice call: a range not aligned to pages needs one pipe slot
      // more than its size suggests, so a full chunk may not fit; the group
      // loop takes what was staged and comes back for the rest.
      loff_t off = static_cast<loff_t>(offset);
      ssize_t r;
      do {
        r = ::splice(job.file_fd, &off, source_.write_end(), nullptr, n,
                     SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      } while (r < 0 && errno == EINTR);
      if (r <= 0) {
        errno = r == 0 ? ENODATA : errno;
        return 0;
      }
      staged = static_cast<std::size_t>(r);
      return staged;
    };
    s.deliver = [&](FanoutTarget& t, std::size_t n, bool more) -> std::size_t {
      // The delivery pipe is empty and as large as the source, so tee takes
      // the whole chunk at once.
      const ssize_t teed = ::tee(source_.read_end(), delivery_.write_end(), n, 0);
      if (teed != static_cast<ssize_t>(n)) {
        detail::Fail(t, teed < 0 ? errno : EIO);
        if (teed > 0) Discard(delivery_, static_cast<std::size_t>(teed));
        return 0;
      }
      std::size_t sent = 0;
      const unsigned flags = SPLICE_F_NONBLOCK | (more ? SPLICE_F_MORE : 0);
      while (sent < n) {
        const ssize_t r =
            ::splice(delivery_.read_end(), nullptr, t.socket_fd, nullptr, n - sent, flags);
        if (r < 0) {
          if (errno == EINTR) continue;
          if (!detail::WouldBlock(errno)) detail::Fail(t, errno);
          break;
        }
        sent += static_cast<std::size_t>(r);
      }
      // What the socket did not take is dropped; the caller resumes this
      // target from its progress, straight from the page cache again.
      if (sent < n) Discard(delivery_, n - sent);
      return sent;
    };
    s.release = [&] {
      Discard(source_, staged);
      staged = 0;
    };
    detail::SendInGroups(job, targets, s);
  }

 private:
  void Discard(const Pipe& pipe, std::size_t n) {
    while (n > 0) {
      const ssize_t r = ::splice(pipe.read_end(), nullptr, devnull_, nullptr, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return;
      n -= static_cast<std::size_t>(r);
    }
  }

  int devnull_;
  Pipe source_;
  Pipe delivery_;
};

}  // namespace

BackendResult MakeSpliceBackend() {
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull < 0) return Unexpected(std::error_code(errno, std::generic_category()));
  auto backend = std::make_unique<SpliceBackend>(devnull);
  if (!backend->ok()) return Unexpected(std::make_error_code(std::errc::too_many_files_open));
  return BackendResult(std::move(backend));
}

}  // namespace swarmcast::push

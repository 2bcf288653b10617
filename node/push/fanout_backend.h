// FanoutBackend sends one frame — a small header followed by a range of a
// file — to many sockets, each from its own progress point, without blocking.
//
// Backends differ only in how payload bytes reach the sockets:
//   copy      pread into a buffer once per chunk, send() it to each socket
//   sendfile  one sendfile() per socket (the classic zero-copy baseline)
//   splice    splice the file range into a pipe once, tee() it to one pipe
//             per socket, splice each pipe into its socket (zero-copy)
//   kmod      /dev/swarmfan: the kernel sends one page-cache range to all
//             sockets in one call (see kmod/)
//
// Contract for every backend: sockets are connected stream sockets, normally
// O_NONBLOCK. Send() advances each target's `progress` by exactly the bytes
// its socket accepted, stops for a socket as soon as it would block, and sets
// `error` (progress then stays put) when a socket or the file fails. A slow
// socket therefore never holds up the others; the caller resumes it later
// with another Send() once it is writable. sendfile() and splice() have no
// MSG_NOSIGNAL, so the process must ignore SIGPIPE. Not thread-safe: one sender thread
// owns a backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

#include "proto/result.h"

namespace swarmcast::push {

struct FanoutJob {
  int file_fd = -1;
  std::uint64_t file_offset = 0;  // where the payload starts in the file
  std::uint32_t length = 0;       // payload bytes
  std::span<const std::byte> header;

  std::uint64_t total() const { return header.size() + length; }
};

struct FanoutTarget {
  int socket_fd = -1;
  std::uint64_t progress = 0;  // bytes of header + payload already sent
  std::error_code error;

  bool finished(const FanoutJob& job) const { return !error && progress == job.total(); }
  bool active(const FanoutJob& job) const { return !error && progress < job.total(); }
};

enum class FanoutKind { kAuto, kKmod, kSplice, kSendfile, kCopy };

class FanoutBackend {
 public:
  virtual ~FanoutBackend() = default;
  virtual std::string_view name() const = 0;
  virtual void Send(const FanoutJob& job, std::span<FanoutTarget> targets) = 0;
};

// "auto", "kmod", "splice", "sendfile", "copy"; nullopt for anything else.
std::optional<FanoutKind> ParseFanoutKind(std::string_view text);
std::string_view FanoutKindName(FanoutKind kind);

// Creates a backend. kAuto picks kmod when /dev/swarmfan opens, else splice.
// Fails with the reason when the asked-for backend cannot work here (e.g.
// kmod without the device).
using BackendResult = Result<std::unique_ptr<FanoutBackend>, std::error_code>;
BackendResult MakeFanoutBackend(FanoutKind kind);

}  // namespace swarmcast::push

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "node/push/fanout_backend.h"

namespace swarmcast::push {

std::unique_ptr<FanoutBackend> MakeCopyBackend();
std::unique_ptr<FanoutBackend> MakeSendfileBackend();
BackendResult MakeSpliceBackend();
BackendResult MakeKmodBackend();

std::optional<FanoutKind> ParseFanoutKind(std::string_view text) {
  for (FanoutKind k : {FanoutKind::kAuto, FanoutKind::kKmod, FanoutKind::kSplice,
                       FanoutKind::kSendfile, FanoutKind::kCopy}) {
    if (text == FanoutKindName(k)) return k;
  }
  return std::nullopt;
}

std::string_view FanoutKindName(FanoutKind kind) {
  switch (kind) {
    case FanoutKind::kAuto:
      return "auto";
    case FanoutKind::kKmod:
      return "kmod";
    case FanoutKind::kSplice:
      return "splice";
    case FanoutKind::kSendfile:
      return "sendfile";
    case FanoutKind::kCopy:
      return "copy";
  }
  return "?";
}

BackendResult MakeFanoutBackend(FanoutKind kind) {
  switch (kind) {
    case FanoutKind::kCopy:
      return MakeCopyBackend();
    case FanoutKind::kSendfile:
      return MakeSendfileBackend();
    case FanoutKind::kSplice:
      return MakeSpliceBackend();
    case FanoutKind::kKmod:
      return MakeKmodBackend();
    case FanoutKind::kAuto:
      // The kernel module when it is loaded, else the zero-copy user-space
      // path; the backend's name() tells the caller which it got.
      if (auto kmod = MakeKmodBackend()) return kmod;
      return MakeSpliceBackend();
  }
  return Unexpected(std::make_error_code(std::errc::invalid_argument));
}

}  // namespace swarmcast::push

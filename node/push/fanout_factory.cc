#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "node/push/fanout_backend.h"

namespace swarmcast::push {

std::unique_ptr<FanoutBackend> MakeCopyBackend();
std::unique_ptr<FanoutBackend> MakeSendfileBackend();
std::unique_ptr<FanoutBackend> MakeSpliceBackend(std::error_code& ec);
std::unique_ptr<FanoutBackend> MakeKmodBackend(std::error_code& ec);

bool ParseFanoutKind(std::string_view text, FanoutKind* kind) {
  for (FanoutKind k : {FanoutKind::kAuto, FanoutKind::kKmod, FanoutKind::kSplice,
                       FanoutKind::kSendfile, FanoutKind::kCopy}) {
    if (text == FanoutKindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
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

std::unique_ptr<FanoutBackend> MakeFanoutBackend(FanoutKind kind, std::error_code& ec) {
  ec.clear();
  switch (kind) {
    case FanoutKind::kCopy:
      return MakeCopyBackend();
    case FanoutKind::kSendfile:
      return MakeSendfileBackend();
    case FanoutKind::kSplice:
      return MakeSpliceBackend(ec);
    case FanoutKind::kKmod:
      return MakeKmodBackend(ec);
    case FanoutKind::kAuto:
      // The kernel module when it is loaded, else the zero-copy user-space
      // path; the backend's name() tells the caller which it got.
      if (auto kmod = MakeKmodBackend(ec)) return kmod;
      ec.clear();
      return MakeSpliceBackend(ec);
  }
  ec = std::make_error_code(std::errc::invalid_argument);
  return nullptr;
}

}  // namespace swarmcast::push

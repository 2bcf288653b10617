// Token files on disk: the ones an operator names (--admin-token-file,
// --announce-token-file) and the admin token the tracker makes for itself
// at first start when none is configured. The text format is
// proto::ParseTokenText's. Called once, at start-up, on the main thread.
#pragma once

#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::tracker {

// The tokens of an operator's token file (a regular file, at most 64 KiB).
// Its owner and mode are the operator's business (a container secret is
// often root's and 0444), so they are not checked here.
Result<std::vector<std::string>, std::string> ReadTokenFile(const std::string& path);

struct GeneratedToken {
  std::string token;  // 64 hex digits when this tracker made it
  bool created = false;
};

// The tracker's own admin token at `path`. The first start creates the
// file with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, holding 32 bytes from
// getrandom(2) as hex; later starts read it back. Refused (with the
// reason), rather than trusted: a path that is a symlink, not a regular
// file, not owned by this process's effective uid, readable or writable by
// group or others, or holding anything but exactly one token. Whoever could
// plant or read such a file could publish in the operator's name.
Result<GeneratedToken, std::string> LoadOrCreateAdminToken(const std::string& path);

}  // namespace swarmcast::tracker

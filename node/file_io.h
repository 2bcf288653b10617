// Whole-file reads and writes with the guarantees the node relies on.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "proto/result.h"

namespace swarmcast::node {

// Writes `bytes` to a temporary file beside `path` and renames it over
// `path`, so a reader (or a restart after SIGKILL) sees the old or the new
// content, never a torn one. The temporary file has a random name and is
// created with O_EXCL|O_NOFOLLOW, so nothing planted in the directory (a
// symlink at a guessed name) can redirect the write. No fsync: it guards against process death,
// which is what resume data and status files need, not power loss.
std::error_code WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes);

// Reads a regular file of at most `max_bytes`; fails with a message.
Result<std::string, std::string> ReadFileBounded(const std::filesystem::path& path,
                                                 std::size_t max_bytes);

}  // namespace swarmcast::node

#include "node/file_io.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "proto/hex.h"

namespace swarmcast::node {
namespace fs = std::filesystem;

namespace {

// A new file beside `path` under a name no one can guess, created by this
// call: O_EXCL fails on anything already there, a symlink included (even a
// dangling one), and O_NOFOLLOW says so twice. Before, the name was
// PATH.tmpPID: whoever could write the directory planted a symlink there
// and had the write land on a file of their choosing.
int CreateUniqueBeside(const fs::path& path, fs::path& tmp) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::array<std::uint8_t, 8> r;
    if (::getrandom(r.data(), r.size(), 0) != static_cast<ssize_t>(r.size())) {
      if (errno == EINTR) continue;
      return -1;
    }
    tmp = path;
    tmp += ".tmp." + proto::ToHex(r);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST: eight random names taken
}

}  // namespace

std::error_code WriteFileAtomically(const fs::path& path, std::string_view bytes) {
  fs::path tmp;
  const int fd = CreateUniqueBeside(path, tmp);
  if (fd < 0) return {errno, std::generic_category()};
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::error_code ec(errno, std::generic_category());
      ::close(fd);
      ::unlink(tmp.c_str());
      return ec;
    }
    off += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::error_code ec(errno, std::generic_category());
    ::unlink(tmp.c_str());
    return ec;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::error_code ec(errno, std::generic_category());
    ::unlink(tmp.c_str());
    return ec;
  }
  return {};
}

Result<std::string, std::string> ReadFileBounded(const fs::path& path, std::size_t max_bytes) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Unexpected(path.string() + ": no such file");
  if (!fs::is_regular_file(st)) return Unexpected(path.string() + ": not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) return Unexpected(path.string() + ": " + ec.message());
  if (size > max_bytes) {
    return Unexpected(path.string() + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::string out(size, '\0');
  if (!in.read(out.data(), static_cast<std::streamsize>(size))) {
    return Unexpected(path.string() + ": read failed: " + std::strerror(errno));
  }
  return out;
}

}  // namespace swarmcast::node

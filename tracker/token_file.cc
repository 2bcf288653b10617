#include "tracker/token_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proto/hex.h"
#include "proto/token_text.h"

namespace swarmcast::tracker {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Reads at most kMaxTokenFileBytes + 1 from `fd` (one more than allowed, so
// an oversized file is seen as such).
Result<std::string, std::string> ReadBounded(int fd, const std::string& path) {
  std::string text(proto::kMaxTokenFileBytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected(Errno("cannot read token file " + path));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

Result<std::string, std::string> ReadOneToken(const std::string& text, const std::string& path) {
  auto tokens = proto::ParseTokenText(text);
  if (!tokens) return Unexpected("token file " + path + " " + tokens.error());
  if (tokens->size() != 1) {
    return Unexpected("token file " + path + " holds " + std::to_string(tokens->size()) +
                      " tokens; want one");
  }
  return tokens->front();
}

Result<std::string, std::string> RandomToken() {
  std::array<std::uint8_t, 32> bytes;
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected(Errno("getrandom"));
    got += static_cast<std::size_t>(n);
  }
  return proto::ToHex(bytes);
}

// The first start: the file must not exist yet (O_EXCL also refuses a
// dangling symlink planted at the path). EEXIST is not an error: another
// start got there first, or the file is there from before.
Result<bool, std::string> CreateTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) return false;
  if (fd < 0) return Unexpected(Errno("cannot create token file " + path));
  auto token = RandomToken();
  std::string text = token ? *token + "\n" : std::string();
  bool ok = token.ok();
  for (std::size_t off = 0; ok && off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<std::size_t>(n);
  }
  // On disk before the token is used: a crash must not leave a token in
  // use that the next start cannot read back.
  ok = ok && ::fsync(fd) == 0;
  const std::string why = token ? Errno("cannot write token file " + path) : token.error();
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    return Unexpected(why);
  }
  return true;
}

}  // namespace

Result<std::vector<std::string>, std::string> ReadTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(Errno("cannot read token file " + path));
  auto text = ReadBounded(fd, path);
  ::close(fd);
  if (!text) return Unexpected(text.error());
  auto tokens = proto::ParseTokenText(*text);
  if (!tokens) return Unexpected("token file " + path + " " + tokens.error());
  return tokens;
}

Result<GeneratedToken, std::string> LoadOrCreateAdminToken(const std::string& path) {
  auto created = CreateTokenFile(path);
  if (!created) return Unexpected(created.error());
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP) {
    return Unexpected("token file " + path + " is a symlink; refusing it (remove it to have a " +
                      "new token made)");
  }
  if (fd < 0) return Unexpected(Errno("cannot open token file " + path));
  // Checked on the open descriptor, so the file cannot be swapped between
  // the check and the read.
  struct stat st {};
  std::string refused;
  if (::fstat(fd, &st) != 0) {
    refused = Errno("cannot stat token file " + path);
  } else if (!S_ISREG(st.st_mode)) {
    refused = "token file " + path + " is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    refused = "token file " + path + " is owned by uid " + std::to_string(st.st_uid) +
              ", not by this tracker's uid " + std::to_string(::geteuid());
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refused = "token file " + path + " has mode " + mode +
              ": group or others may read or write it; chmod 600 it, or remove it to have a " +
              "new token made";
  }
  if (!refused.empty()) {
    ::close(fd);
    return Unexpected(refused);
  }
  auto text = ReadBounded(fd, path);
  ::close(fd);
  if (!text) return Unexpected(text.error());
  auto token = ReadOneToken(*text, path);
  if (!token) return Unexpected(token.error());
  return GeneratedToken{std::move(*token), *created};
}

}  // namespace swarmcast::tracker

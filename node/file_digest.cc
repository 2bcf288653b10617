#include "node/file_digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "proto/hex.h"
#include "proto/thread_name.h"

namespace swarmcast::node {
namespace {

constexpr std::size_t kBlock = 256 << 10;  // bounded memory, like PieceHasher

struct EvpDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Sha256Ctx = std::unique_ptr<EVP_MD_CTX, EvpDeleter>;

Sha256Ctx NewSha256() {
  Sha256Ctx ctx(EVP_MD_CTX_new());
  if (ctx) EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  return ctx;
}

std::string HexDigest(EVP_MD_CTX* ctx) {
  unsigned char digest[32];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  return proto::ToHex(std::string_view(reinterpret_cast<const char*>(digest), len));
}

// Reads [offset, offset+length) of `fd` into the digest; an error names
// the file.
std::optional<std::string> HashRange(int fd, const std::filesystem::path& file, std::int64_t offset,
                                     std::int64_t length, EVP_MD_CTX* ctx,
                                     std::vector<char>& block) {
  while (length > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::int64_t>(length, kBlock));
    const ssize_t got = ::pread(fd, block.data(), want, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return file.string() + ": read: " + std::strerror(errno);
    if (got == 0) return file.string() + ": shorter than expected";
    EVP_DigestUpdate(ctx, block.data(), static_cast<std::size_t>(got));
    offset += got;
    length -= got;
  }
  return std::nullopt;
}

}  // namespace

WholeFileDigest::WholeFileDigest(std::filesystem::path file, std::int64_t size,
                                 std::int64_t piece_length, Done done)
    : file_(std::move(file)),
      size_(size),
      piece_length_(piece_length),
      pieces_(piece_length > 0 ? (size + piece_length - 1) / piece_length : 0),
      done_(std::move(done)),
      verified_(static_cast<std::size_t>(pieces_), false),
      worker_([this] { Work(); }) {}

WholeFileDigest::~WholeFileDigest() {
  {
    MutexLock l(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  worker_.join();
}

void WholeFileDigest::MarkVerified(std::int64_t piece) {
  if (piece < 0 || piece >= pieces_) return;
  {
    MutexLock l(mu_);
    verified_[static_cast<std::size_t>(piece)] = true;
  }
  cv_.NotifyAll();
}

std::int64_t WholeFileDigest::bytes_read() const {
  MutexLock l(mu_);
  return bytes_read_;
}

void WholeFileDigest::Work() {
  proto::NameThisThread("sha256-digest");
  Sha256Ctx ctx = NewSha256();
  if (!ctx) {
    done_(Unexpected(std::string("cannot start SHA-256")));
    return;
  }
  std::vector<char> block(kBlock);
  int fd = -1;
  std::optional<std::string> error;
  for (std::int64_t frontier = 0; frontier < pieces_ && !error; ++frontier) {
    {
      MutexLock l(mu_);
      while (!stop_ && !verified_[static_cast<std::size_t>(frontier)]) cv_.Wait(mu_);
      if (stop_) break;
    }
    // Opened at the first verified piece: libtorrent creates the file
    // when it writes its first block.
    if (fd < 0 && (fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
      error = file_.string() + ": open: " + std::strerror(errno);
      break;
    }
    const std::int64_t offset = frontier * piece_length_;
    const std::int64_t length = std::min(piece_length_, size_ - offset);
    error = HashRange(fd, file_, offset, length, ctx.get(), block);
    MutexLock l(mu_);
    if (!error) bytes_read_ += length;
  }
  if (fd >= 0) ::close(fd);
  bool stopped;
  {
    MutexLock l(mu_);
    stopped = stop_;
  }
  if (error) {
    done_(Unexpected(std::move(*error)));
  } else if (!stopped) {
    done_(HexDigest(ctx.get()));
  }
}

Result<std::string, std::string> Sha256OfFile(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(file.string() + ": open: " + std::strerror(errno));
  Sha256Ctx ctx = NewSha256();
  std::vector<char> block(kBlock);
  std::optional<std::string> error;
  for (std::int64_t offset = 0; ctx && !error;) {
    const ssize_t got = ::pread(fd, block.data(), block.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) error = file.string() + ": read: " + std::strerror(errno);
    if (got <= 0) break;
    EVP_DigestUpdate(ctx.get(), block.data(), static_cast<std::size_t>(got));
    offset += got;
  }
  ::close(fd);
  if (!ctx) return Unexpected(std::string("cannot start SHA-256"));
  if (error) return Unexpected(std::move(*error));
  return HexDigest(ctx.get());
}

}  // namespace swarmcast::node

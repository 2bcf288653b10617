#include "node/piece_hasher.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "proto/mutex.h"
#include "proto/thread_name.h"

namespace swarmcast::node {
namespace {

// Large enough that a read costs little per byte, small enough that
// threads x block stays far below any memory budget.
constexpr std::int64_t kBlockBytes = 256 << 10;
constexpr std::size_t kHashBytes = 20;

struct EvpDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// What all workers share: the layout, the next piece to take, the result.
class PieceHashRun {
 public:
  explicit PieceHashRun(const HashJob& job) : job_(job) {
    std::int64_t offset = 0;
    for (const auto& s : job.segments) {
      starts_.push_back(offset);
      offset += s.size;
    }
    total_bytes_ = offset;
    pieces_ = (total_bytes_ + job.piece_length - 1) / job.piece_length;
    hashes_.assign(static_cast<std::size_t>(pieces_) * kHashBytes, '\0');
  }

  std::int64_t pieces() const { return pieces_; }

  // One worker: takes pieces until none are left or one failed.
  void Work() {
    Reader reader(*this);
    std::unique_ptr<EVP_MD_CTX, EvpDeleter> ctx(EVP_MD_CTX_new());
    std::vector<char> block(static_cast<std::size_t>(kBlockBytes));
    for (;;) {
      const std::int64_t piece = next_.fetch_add(1);
      if (piece >= pieces_ || failed_.load()) break;
      const std::int64_t begin = piece * job_.piece_length;
      const std::int64_t end = std::min(begin + job_.piece_length, total_bytes_);
      EVP_DigestInit_ex(ctx.get(), EVP_sha1(), nullptr);
      for (std::int64_t at = begin; at < end;) {
        const auto got = reader.Read(at, std::min(end - at, kBlockBytes), block.data());
        if (got <= 0) return;  // Read recorded the failure
        EVP_DigestUpdate(ctx.get(), block.data(), static_cast<std::size_t>(got));
        at += got;
      }
      unsigned len = 0;
      EVP_DigestFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(&hashes_[piece * kHashBytes]),
                         &len);
      {
        MutexLock lock(mu_);
        ++done_;
      }
      cv_.NotifyOne();
    }
  }

  // On the calling thread: reports progress until every worker is done.
  Result<std::string, std::string> Collect(int workers) EXCLUDES(mu_) {
    std::int64_t reported = 0;
    for (;;) {
      std::int64_t done = 0;
      bool all_finished = false;
      {
        MutexLock lock(mu_);
        while (done_ == reported && finished_ != workers) cv_.Wait(mu_);
        done = done_;
        all_finished = finished_ == workers;
      }
      // Progress runs unlocked: it may print or write a status file.
      while (reported < done) {
        ++reported;
        if (job_.progress) job_.progress(reported, pieces_);
      }
      if (all_finished) break;
    }
    MutexLock lock(mu_);
    if (!error_.empty()) return Unexpected(error_);
    return std::move(hashes_);
  }

  void Finished() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      ++finished_;
    }
    cv_.NotifyOne();
  }

 private:
  // Reads bytes at a payload offset from whichever file holds them,
  // keeping the last file open (pieces are mostly inside one file).
  class Reader {
   public:
    explicit Reader(PieceHashRun& run) : run_(run) {}
    ~Reader() {
      if (fd_ >= 0) ::close(fd_);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    // Up to `want` bytes at `offset`, not past the end of its segment;
    // <= 0 after recording an error.
    std::int64_t Read(std::int64_t offset, std::int64_t want, char* out) {
      const auto& starts = run_.starts_;
      // The last segment starting at or before offset that is not empty.
      auto it = std::upper_bound(starts.begin(), starts.end(), offset);
      std::size_t seg = static_cast<std::size_t>(it - starts.begin()) - 1;
      // An empty file shares its start with the next one, so the search
      // above already lands past it; this only guards that invariant.
      while (run_.job_.segments[seg].size == 0 && seg + 1 < starts.size()) ++seg;
      const HashSegment& s = run_.job_.segments[seg];
      const std::int64_t in_seg = offset - starts[seg];
      want = std::min(want, s.size - in_seg);
      if (s.path.empty()) {
        std::memset(out, 0, static_cast<std::size_t>(want));
        return want;
      }
      if (seg != open_seg_) {
        if (fd_ >= 0) ::close(fd_);
        open_seg_ = seg;
        fd_ = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) return run_.Fail(s.path.string() + ": " + std::strerror(errno));
        ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
      }
      ssize_t n;
      do {
        n = ::pread(fd_, out, static_cast<std::size_t>(want), in_seg);
      } while (n < 0 && errno == EINTR);
      if (n < 0) return run_.Fail(s.path.string() + ": read failed: " + std::strerror(errno));
      if (n == 0) return run_.Fail(s.path.string() + ": shorter than listed (it changed)");
      return n;
    }

   private:
    PieceHashRun& run_;
    std::size_t open_seg_ = static_cast<std::size_t>(-1);
    int fd_ = -1;
  };

  std::int64_t Fail(std::string why) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (error_.empty()) error_ = std::move(why);
    failed_ = true;
    return -1;
  }

  const HashJob& job_;
  std::vector<std::int64_t> starts_;
  std::int64_t total_bytes_ = 0;
  std::int64_t pieces_ = 0;
  std::atomic<std::int64_t> next_{0};
  std::atomic<bool> failed_{false};
  std::string hashes_;  // each worker writes only the pieces it took

  Mutex mu_;
  CondVar cv_;
  std::int64_t done_ GUARDED_BY(mu_) = 0;
  int finished_ GUARDED_BY(mu_) = 0;
  std::string error_ GUARDED_BY(mu_);
};

}  // namespace

Result<std::string, std::string> HashPieces(const HashJob& job) {
  if (job.piece_length <= 0) return Unexpected("piece length must be positive");
  PieceHashRun run(job);
  if (run.pieces() == 0) return Unexpected("nothing to hash: the payload is empty");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers =
      static_cast<int>(std::min<std::int64_t>(job.threads > 0 ? job.threads : cores, run.pieces()));
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([&run] {
      proto::NameThisThread("piece-hash");
      run.Work();
      run.Finished();
    });
  }
  return run.Collect(workers);
}

}  // namespace swarmcast::node

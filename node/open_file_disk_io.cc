#include "node/open_file_disk_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <libtorrent/disk_buffer_holder.hpp>
#include <libtorrent/download_priority.hpp>
#include <libtorrent/error_code.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/posix_disk_io.hpp>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace swarmcast::node {

namespace {

namespace fs = std::filesystem;
using lt::file_index_t;
using lt::operation_t;
using lt::piece_index_t;
using lt::storage_error;
using lt::storage_index_t;

// Pieces being hashed as they are written, per torrent: enough for the
// pieces in flight at once (pushed and wire); past it a piece is read back.
constexpr std::size_t kMaxInOrderPieces = 1024;

storage_error ErrnoError(file_index_t file, operation_t op) {
  return storage_error(lt::error_code(errno, boost::system::generic_category()), file, op);
}

// One torrent's files, as this back-end serves them.
class Files {
 public:
  Files(lt::storage_holder inner, const lt::storage_params& p)
      : inner_(std::move(inner)),
        files_(p.files),
        save_path_(fs::absolute(p.path).lexically_normal().string()),
        fds_(static_cast<std::size_t>(p.files.num_files())) {
    eligible_ = p.mapped_files == nullptr;
    for (file_index_t f : files_.file_range()) {
      if (files_.file_flags(f) & lt::file_storage::flag_symlink) eligible_ = false;
      if (files_.pad_file_at(f)) has_pad_files_ = true;
      const auto i = static_cast<int>(f);
      if (i < static_cast<int>(p.priorities.size()) && p.priorities[f] == lt::dont_download) {
        eligible_ = false;
      }
    }
    direct_ = eligible_;
  }
  ~Files() { CloseAll(); }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  // False: this torrent goes to posix_disk_io for everything.
  bool direct() const { return direct_; }
  void StopDirect() {
    eligible_ = false;
    Pause();
  }
  // Until Resume: posix_disk_io serves it (a move under way).
  void Pause() {
    direct_ = false;
    CloseAll();
    in_order_.clear();
  }
  // The move into `save_path` is done.
  void Resume(const std::string& save_path) {
    save_path_ = fs::absolute(save_path).lexically_normal().string();
    direct_ = eligible_;
  }

  void CloseAll() {
    for (auto& f : fds_) {
      if (f.fd >= 0) ::close(f.fd);
      f = {};
    }
    open_ = 0;
  }

  int PieceSize(piece_index_t piece) const { return files_.piece_size(piece); }

  // Reads or writes `len` bytes at (piece, offset), file by file (the
  // slices of file_storage::map_block, as piece_salvage reads them); pad
  // files read as zeros and take no writes, as in posix_disk_io.
  storage_error ReadWrite(bool write, char* buf, int len, piece_index_t piece, int offset) {
    const std::int64_t at =
        static_cast<std::int64_t>(static_cast<int>(piece)) * files_.piece_length() + offset;
    if (len <= 0 || at < 0 || at + len > files_.total_size()) {
      return storage_error(lt::errors::invalid_piece_index,
                           write ? operation_t::file_write : operation_t::file_read);
    }
    for (const lt::file_slice& slice : files_.map_block(piece, offset, len)) {
      const auto n = static_cast<int>(slice.size);
      if (files_.pad_file_at(slice.file_index)) {
        if (!write) std::memset(buf, 0, static_cast<std::size_t>(n));
      } else if (auto e = Transfer(write, slice.file_index, buf, n, slice.offset); e.ec) {
        return e;
      }
      buf += n;
    }
    return {};
  }

  // A block was written: extends the piece's running hash when the block
  // follows on from what was hashed, else gives the piece up (read back).
  void Written(piece_index_t piece, int offset, const char* buf, int len) {
    if (has_pad_files_) return;  // the bytes on disk of a pad file are not the buffer's
    if (offset == 0) {
      if (in_order_.size() >= kMaxInOrderPieces && !in_order_.contains(piece)) return;
      auto& h = in_order_[piece];
      h.hasher.reset();
      h.hasher.update(buf, len);
      h.next = len;
      return;
    }
    auto it = in_order_.find(piece);
    if (it == in_order_.end()) return;
    if (it->second.next != offset) {
      in_order_.erase(it);
      return;
    }
    it->second.hasher.update(buf, len);
    it->second.next += len;
  }

  // The piece's hash if all of it was hashed as it was written.
  std::optional<lt::sha1_hash> TakeInOrderHash(piece_index_t piece) {
    auto it = in_order_.find(piece);
    if (it == in_order_.end()) return std::nullopt;
    std::optional<lt::sha1_hash> out;
    if (it->second.next == PieceSize(piece)) out = it->second.hasher.final();
    in_order_.erase(it);
    return out;
  }
  void ForgetPiece(piece_index_t piece) { in_order_.erase(piece); }

 private:
  struct Fd {
    int fd = -1;
    bool writable = false;
  };
  struct InOrder {
    lt::hasher hasher;
    int next = 0;
  };

  storage_error Transfer(bool write, file_index_t f, char* buf, int len, std::int64_t offset) {
    const int fd = Open(f, write);
    if (fd < 0) return ErrnoError(f, operation_t::file_open);
    while (len > 0) {
      const ssize_t n = write ? ::pwrite(fd, buf, static_cast<std::size_t>(len), offset)
                              : ::pread(fd, buf, static_cast<std::size_t>(len), offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(f, write ? operation_t::file_write : operation_t::file_read);
      }
      if (n == 0) {  // a read past the end: the file is shorter than the torrent says
        return storage_error(lt::errors::file_too_short, f, operation_t::file_read);
      }
      buf += n;
      len -= static_cast<int>(n);
      offset += n;
    }
    return {};
  }

  // The file's descriptor, opened on first use (read-only until a write
  // needs more: a seed may serve a file it cannot write). A write creates
  // the file and its directories, as posix_disk_io does.
  int Open(file_index_t f, bool write) {
    Fd& slot = fds_[static_cast<std::size_t>(static_cast<int>(f))];
    if (slot.fd >= 0 && (slot.writable || !write)) return slot.fd;
    if (slot.fd >= 0) {
      ::close(slot.fd);
      slot = {};
      --open_;
    }
    if (open_ >= kMaxOpenFiles) CloseAll();
    const std::string path = files_.file_path(f, save_path_);
    int fd = ::open(path.c_str(), write ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
    if (fd < 0 && write && errno == ENOENT) {
      std::error_code ec;
      fs::create_directories(fs::path(path).parent_path(), ec);
      if (ec) {
        errno = ec.value();
        return -1;
      }
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    }
    if (fd < 0) return -1;
    slot = {fd, write};
    ++open_;
    return fd;
  }

  lt::storage_holder inner_;  // posix_disk_io's storage of the same torrent
  const lt::file_storage& files_;
  std::string save_path_;
  std::vector<Fd> fds_;
  int open_ = 0;
  bool eligible_ = true;  // no renamed files, symlinks or part files
  bool direct_ = true;    // eligible and not being moved
  bool has_pad_files_ = false;
  std::map<piece_index_t, InOrder> in_order_;
};

class OpenFileDiskIo final : public lt::disk_interface, public lt::buffer_allocator_interface {
 public:
  OpenFileDiskIo(lt::io_context& ios, const lt::settings_interface& settings,
                 lt::counters& counters)
      : ios_(ios), inner_(lt::posix_disk_io_constructor(ios, settings, counters)) {}

  lt::storage_holder new_torrent(const lt::storage_params& p,
                                 const std::shared_ptr<void>& torrent) override {
    lt::storage_holder inner = inner_->new_torrent(p, torrent);
    const storage_index_t idx = inner;
    const auto i = static_cast<std::size_t>(static_cast<std::uint32_t>(idx));
    if (torrents_.size() <= i) torrents_.resize(i + 1);
    torrents_[i] = std::make_shared<Files>(std::move(inner), p);
    return lt::storage_holder(idx, *this);
  }

  void remove_torrent(storage_index_t idx) override {
    // Destroying the Files closes its descriptors and releases posix_disk_io's
    // storage of the torrent.
    torrents_[Index(idx)].reset();
  }

  void async_read(storage_index_t idx, const lt::peer_request& r,
                  std::function<void(lt::disk_buffer_holder, const storage_error&)> handler,
                  lt::disk_job_flags_t flags) override {
    Files* t = Direct(idx);
    if (t == nullptr || r.length <= 0 || r.length > lt::default_block_size) {
      inner_->async_read(idx, r, std::move(handler), flags);
      return;
    }
    char* buf = new char[lt::default_block_size];
    lt::disk_buffer_holder holder(*this, buf, lt::default_block_size);
    storage_error e = t->ReadWrite(false, buf, r.length, r.piece, r.start);
    boost::asio::post(
        ios_, [h = std::move(handler), b = std::move(holder), e]() mutable { h(std::move(b), e); });
  }

  bool async_write(storage_index_t idx, const lt::peer_request& r, const char* buf,
                   std::shared_ptr<lt::disk_observer> o,
                   std::function<void(const storage_error&)> handler,
                   lt::disk_job_flags_t flags) override {
    Files* t = Direct(idx);
    if (t == nullptr)
      return inner_->async_write(idx, r, buf, std::move(o), std::move(handler), flags);
    // pwrite only reads the buffer; ReadWrite takes one pointer for both ways.
    storage_error e = t->ReadWrite(true, const_cast<char*>(buf), r.length, r.piece, r.start);
    if (e.ec) {
      t->ForgetPiece(r.piece);
    } else {
      t->Written(r.piece, r.start, buf, r.length);
    }
    boost::asio::post(ios_, [h = std::move(handler), e] { h(e); });
    return false;  // never a queue to wait on: the write is done
  }

  void async_hash(storage_index_t idx, piece_index_t piece, lt::span<lt::sha256_hash> v2,
                  lt::disk_job_flags_t flags,
                  std::function<void(piece_index_t, const lt::sha1_hash&, const storage_error&)>
                      handler) override {
    Files* t = Direct(idx);
    if (t == nullptr || !v2.empty() || !(flags & lt::disk_interface::v1_hash)) {
      inner_->async_hash(idx, piece, v2, flags, std::move(handler));
      return;
    }
    storage_error e;
    lt::sha1_hash hash;
    if (auto done = t->TakeInOrderHash(piece)) {
      hash = *done;
    } else {
      lt::hasher h;
      const int size = t->PieceSize(piece);
      hash_buf_.resize(static_cast<std::size_t>(lt::default_block_size));
      for (int off = 0; off < size && !e.ec; off += lt::default_block_size) {
        const int n = std::min(lt::default_block_size, size - off);
        e = t->ReadWrite(false, hash_buf_.data(), n, piece, off);
        if (!e.ec) h.update(hash_buf_.data(), n);
      }
      hash = h.final();
    }
    boost::asio::post(ios_, [h = std::move(handler), piece, hash, e] { h(piece, hash, e); });
  }

  void async_hash2(storage_index_t idx, piece_index_t piece, int offset, lt::disk_job_flags_t flags,
                   std::function<void(piece_index_t, const lt::sha256_hash&, const storage_error&)>
                       handler) override {
    inner_->async_hash2(idx, piece, offset, flags, std::move(handler));
  }

  void async_move_storage(
      storage_index_t idx, std::string p, lt::move_flags_t flags,
      std::function<void(lt::status_t, const std::string&, const storage_error&)> handler)
      override {
    // A get moves its download into place when it is complete, then serves
    // it from there: the move itself is posix_disk_io's, and this back-end
    // takes over again at the new path once it succeeded.
    const std::shared_ptr<Files>& t = torrents_[Index(idx)];
    if (t == nullptr)
      return inner_->async_move_storage(idx, std::move(p), flags, std::move(handler));
    t->Pause();
    inner_->async_move_storage(
        idx, std::move(p), flags,
        [weak = std::weak_ptr<Files>(t), h = std::move(handler)](
            lt::status_t ret, const std::string& path, const storage_error& e) {
          if (auto files = weak.lock();
              files != nullptr && !e.ec && ret == lt::status_t::no_error) {
            files->Resume(path);
          }
          h(ret, path, e);
        });
  }

  void async_release_files(storage_index_t idx, std::function<void()> handler) override {
    CloseFiles(idx);
    inner_->async_release_files(idx, std::move(handler));
  }

  void async_check_files(storage_index_t idx, const lt::add_torrent_params* resume_data,
                         lt::aux::vector<std::string, file_index_t> links,
                         std::function<void(lt::status_t, const storage_error&)> handler) override {
    inner_->async_check_files(idx, resume_data, std::move(links), std::move(handler));
  }

  void async_stop_torrent(storage_index_t idx, std::function<void()> handler) override {
    CloseFiles(idx);
    inner_->async_stop_torrent(idx, std::move(handler));
  }

  void async_rename_file(storage_index_t idx, file_index_t index, std::string name,
                         std::function<void(const std::string&, file_index_t, const storage_error&)>
                             handler) override {
    StopDirect(idx);
    inner_->async_rename_file(idx, index, std::move(name), std::move(handler));
  }

  void async_delete_files(storage_index_t idx, lt::remove_flags_t options,
                          std::function<void(const storage_error&)> handler) override {
    StopDirect(idx);
    inner_->async_delete_files(idx, options, std::move(handler));
  }

  void async_set_file_priority(
      storage_index_t idx, lt::aux::vector<lt::download_priority_t, file_index_t> prio,
      std::function<void(const storage_error&,
                         lt::aux::vector<lt::download_priority_t, file_index_t>)>
          handler) override {
    // A file not to be downloaded lives in a part file, which only
    // posix_disk_io knows.
    for (const auto p : prio) {
      if (p == lt::dont_download) StopDirect(idx);
    }
    inner_->async_set_file_priority(idx, std::move(prio), std::move(handler));
  }

  void async_clear_piece(storage_index_t idx, piece_index_t index,
                         std::function<void(piece_index_t)> handler) override {
    if (Files* t = Direct(idx)) t->ForgetPiece(index);
    inner_->async_clear_piece(idx, index, std::move(handler));
  }

  void update_stats_counters(lt::counters& c) const override { inner_->update_stats_counters(c); }
  std::vector<lt::open_file_state> get_status(storage_index_t idx) const override {
    return inner_->get_status(idx);
  }
  void abort(bool wait) override { inner_->abort(wait); }
  void submit_jobs() override { inner_->submit_jobs(); }
  void settings_updated() override { inner_->settings_updated(); }

  void free_disk_buffer(char* b) override { delete[] b; }

 private:
  static std::size_t Index(storage_index_t idx) {
    return static_cast<std::size_t>(static_cast<std::uint32_t>(idx));
  }
  Files* Direct(storage_index_t idx) {
    Files* t = torrents_[Index(idx)].get();
    return t != nullptr && t->direct() ? t : nullptr;
  }
  void StopDirect(storage_index_t idx) {
    if (Files* t = torrents_[Index(idx)].get()) t->StopDirect();
  }
  void CloseFiles(storage_index_t idx) {
    if (Files* t = torrents_[Index(idx)].get()) t->CloseAll();
  }

  lt::io_context& ios_;
  // Declared before torrents_, so that the torrents' posix_disk_io storages
  // are released (~Files) while it still exists.
  std::unique_ptr<lt::disk_interface> inner_;
  // Shared only with a move's completion handler, which may outlive it.
  std::vector<std::shared_ptr<Files>> torrents_;
  std::vector<char> hash_buf_;  // the read-back of a piece being hashed
};

}  // namespace

std::unique_ptr<lt::disk_interface> OpenFileDiskIoConstructor(
    lt::io_context& ios, const lt::settings_interface& settings, lt::counters& counters) {
  return std::make_unique<OpenFileDiskIo>(ios, settings, counters);
}

}  // namespace swarmcast::node

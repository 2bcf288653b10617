#include "node/piece_salvage.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/hasher.hpp>
#include <map>

namespace swarmcast::node {
namespace {

class OpenFiles {
 public:
  ~OpenFiles() {
    for (auto& [index, fd] : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  int Get(lt::file_index_t index, const std::string& path) {
    auto it = fds_.find(index);
    if (it != fds_.end()) return it->second;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    fds_.emplace(index, fd);
    return fd;
  }

 private:
  std::map<lt::file_index_t, int> fds_;
};

// Reads [offset, offset+size) of `fd` into `out`; false if any part of it
// is a hole, missing, or short.
bool ReadData(int fd, std::int64_t offset, std::int64_t size, char* out) {
  if (fd < 0) return false;
  const off_t data = ::lseek(fd, offset, SEEK_DATA);
  if (data < 0 || data > offset) return false;  // starts in a hole (or past the end)
  const off_t hole = ::lseek(fd, offset, SEEK_HOLE);
  if (hole >= 0 && hole < offset + size) return false;
  std::int64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, static_cast<std::size_t>(size - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

}  // namespace

int SalvageVerifiedPieces(const lt::torrent_info& ti, const std::string& save_path,
                          const lt::typed_bitfield<lt::piece_index_t>& have,
                          const std::function<void(lt::piece_index_t, std::vector<char>)>& found) {
  const lt::file_storage& files = ti.files();
  OpenFiles open;
  int count = 0;
  for (const lt::piece_index_t piece : files.piece_range()) {
    if (static_cast<int>(piece) < have.size() && have[piece]) continue;
    const int size = files.piece_size(piece);
    std::vector<char> buf(static_cast<std::size_t>(size));
    bool ok = true;
    std::int64_t pos = 0;
    for (const lt::file_slice& slice : files.map_block(piece, 0, size)) {
      if (files.pad_file_at(slice.file_index)) {
        std::fill_n(buf.begin() + pos, slice.size, '\0');
      } else {
        const std::string path = files.file_path(slice.file_index, save_path);
        ok = ReadData(open.Get(slice.file_index, path), slice.offset, slice.size, buf.data() + pos);
      }
      if (!ok) break;
      pos += slice.size;
    }
    if (!ok || pos != size) continue;
    lt::hasher h(buf.data(), size);
    if (h.final() != ti.hash_for_piece(piece)) continue;
    found(piece, std::move(buf));
    ++count;
  }
  return count;
}

}  // namespace swarmcast::node

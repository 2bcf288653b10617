#include "node/resume_data.h"

#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/read_resume_data.hpp>
#include <libtorrent/write_resume_data.hpp>

#include "node/file_io.h"

namespace swarmcast::node {

namespace {
constexpr std::size_t kMaxResumeBytes = 64u << 20;
}  // namespace

Result<lt::typed_bitfield<lt::piece_index_t>, std::string> LoadVerifiedPieces(
    const std::filesystem::path& path, const lt::torrent_info& ti) {
  auto buf = ReadFileBounded(path, kMaxResumeBytes);
  if (!buf) return Unexpected(buf.error());
  lt::error_code ec;
  const lt::add_torrent_params p = lt::read_resume_data(
      lt::span<const char>(buf->data(), static_cast<std::ptrdiff_t>(buf->size())), ec);
  if (ec) return Unexpected("not resume data: " + ec.message());
  if (p.info_hashes.v1 != ti.info_hashes().v1) return Unexpected("resume data of another torrent");
  if (p.have_pieces.size() > ti.num_pieces())
    return Unexpected("resume data lists too many pieces");
  lt::typed_bitfield<lt::piece_index_t> have(ti.num_pieces(), false);
  for (lt::piece_index_t i(0); i < p.have_pieces.end_index(); ++i) {
    if (p.have_pieces[i]) have.set_bit(i);
  }
  return have;
}

ResumeSaver::ResumeSaver(std::filesystem::path path, lt::torrent_handle handle, proto::Logger log)
    : path_(std::move(path)), handle_(std::move(handle)), log_(std::move(log)) {}

void ResumeSaver::Save(Clock::time_point now) {
  owner_.AssertOnOwnerThread();
  due_ = true;
  Tick(now);
}

void ResumeSaver::Tick(Clock::time_point now) {
  owner_.AssertOnOwnerThread();
  if (!due_ || now < not_before_) return;
  due_ = false;
  not_before_ = now + kResumeSaveEvery;
  Request(false);
}

bool ResumeSaver::SaveFinal() {
  owner_.AssertOnOwnerThread();
  if (stopped_ || !handle_.is_valid()) return false;
  final_wanted_ = true;
  Request(true);
  return true;
}

void ResumeSaver::Request(bool flush) {
  if (stopped_ || !handle_.is_valid()) return;
  if (in_flight_) {
    again_ = true;
    return;
  }
  in_flight_ = true;
  again_ = false;
  in_flight_is_final_ = flush;
  handle_.save_resume_data(flush ? lt::torrent_handle::flush_disk_cache
                                 : lt::resume_data_flags_t{});
}

ResumeSaver::Outcome ResumeSaver::Handle(const lt::alert* a) {
  owner_.AssertOnOwnerThread();
  if (const auto* saved = lt::alert_cast<lt::save_resume_data_alert>(a)) {
    if (!stopped_) {
      const std::vector<char> buf = lt::write_resume_data_buf(saved->params);
      if (auto ec = WriteFileAtomically(path_, std::string_view(buf.data(), buf.size()))) {
        log_.Warning("cannot write resume data " + path_.string() + ": " + ec.message());
      }
    }
  } else if (!lt::alert_cast<lt::save_resume_data_failed_alert>(a)) {
    return Outcome::kNotMine;
  }
  in_flight_ = false;
  const bool final_done = in_flight_is_final_;
  if (again_ || (final_wanted_ && !final_done)) {
    Request(final_wanted_);
    if (in_flight_) return Outcome::kSaved;
  }
  return final_wanted_ ? Outcome::kFinalSaved : Outcome::kSaved;
}

}  // namespace swarmcast::node

#include "tools/sim/bit_torrent.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace swarmcast::sim {

namespace {
constexpr std::int64_t kBlockBytes = 16 << 10;
constexpr double kBlockHeaderBytes = 13;
// Peers looked at per choice. Below twice this many the whole pool is
// scanned, so the end game, when few receivers still miss pieces, never
// depends on luck.
constexpr std::size_t kSamples = 16;

// Word i of what `up` can send `down`: pieces `down` neither has nor is
// checking, and either is not fetching (normal) or is fetching from
// one other peer (end game: a second source, never a third).
std::uint64_t Offer(const NodeState& up, const NodeState& down, std::size_t i, bool end_game) {
  const std::uint64_t lacks = up.have.word(i) & ~(down.have.word(i) | down.verifying.word(i));
  return end_game ? lacks & down.fetching.word(i) & ~down.doubled.word(i)
                  : lacks & ~down.fetching.word(i);
}

// libtorrent's end game: every piece the node lacks is being fetched (as far
// as libtorrent knows: a piece on its way by push counts as lacking), so it
// asks other peers for pieces already asked for.
bool InEndGame(const NodeState& n) {
  for (std::size_t i = 0; i < n.have.words(); ++i) {
    const std::uint64_t open = ~(n.have.word(i) | n.fetching.word(i) | n.verifying.word(i));
    if (open & n.have.valid(i)) return false;
  }
  return true;
}

// The candidate from `pool` that `fits` with the lowest `load`, among a few
// sampled at random, or among all when the pool is small.
template <class Fits, class Load>
std::optional<std::uint32_t> BestOf(const IndexedSet& pool, std::mt19937_64& rng, Fits fits,
                                    Load load) {
  const bool scan = pool.size() <= 2 * kSamples;
  const std::size_t tries = scan ? pool.size() : kSamples;
  std::optional<std::uint32_t> best;
  for (std::size_t t = 0; t < tries; ++t) {
    const std::uint32_t id = scan ? pool[t] : pool.pick(rng);
    if (fits(id) && (!best || load(id) < load(*best))) best = id;
  }
  return best;
}

}  // namespace

double BitTorrentPieceBytes(std::int64_t piece_bytes) {
  const std::int64_t blocks = (piece_bytes + kBlockBytes - 1) / kBlockBytes;
  return static_cast<double>(piece_bytes) + kBlockHeaderBytes * static_cast<double>(blocks);
}

bool BitTorrentRepair::MayServe(std::uint32_t u, std::uint32_t v) const {
  if (u == v) return false;
  const NodeState& up = s_.nodes[u];
  const NodeState& down = s_.nodes[v];
  if (!up.joined || up.gone || up.have_count == 0) return false;
  if (!down.joined || down.complete) return false;
  if (u == kSeed && (!s_.seed_present || (s_.config.push && down.subscribed))) return false;
  // A forwarder's wire gate likewise: it does not serve its subscribers
  // (every subscriber of the seed subscribes to every forwarder).
  if (up.forwarding && down.subscribed) return false;
  if (up.uploads.size() >= s_.config.upload_slots) return false;
  if (s_.config.max_downloads && down.fetches.size() >= s_.config.max_downloads) return false;
  for (const UploadSlot& slot : up.uploads) {
    if (slot.peer == v) return false;
  }
  return true;
}

std::optional<bool> BitTorrentRepair::Mode(std::uint32_t u, std::uint32_t v) const {
  const NodeState& up = s_.nodes[u];
  const NodeState& down = s_.nodes[v];
  for (std::size_t i = 0; i < up.have.words(); ++i) {
    if (Offer(up, down, i, false)) return false;
  }
  if (!s_.config.end_game || !InEndGame(down)) return std::nullopt;
  for (std::size_t i = 0; i < up.have.words(); ++i) {
    if (Offer(up, down, i, true)) return true;
  }
  return std::nullopt;
}

bool BitTorrentRepair::Wants(std::uint32_t u, std::uint32_t v) const {
  return Mode(u, v).has_value();
}

std::optional<std::uint32_t> BitTorrentRepair::PickPiece(std::uint32_t u, std::uint32_t v) {
  const auto end_game = Mode(u, v);
  if (!end_game) return std::nullopt;
  const NodeState& up = s_.nodes[u];
  const NodeState& down = s_.nodes[v];
  const std::size_t words = up.have.words();
  auto bits = [&](std::size_t i) { return Offer(up, down, i, *end_game); };
  if (s_.config.pick == PiecePick::kRandom) {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < words; ++i) total += std::popcount(bits(i));
    if (total == 0) return std::nullopt;
    std::uint64_t k = std::uniform_int_distribution<std::uint64_t>(0, total - 1)(s_.rng);
    for (std::size_t i = 0; i < words; ++i) {
      std::uint64_t w = bits(i);
      const auto c = static_cast<std::uint64_t>(std::popcount(w));
      if (k >= c) {
        k -= c;
        continue;
      }
      for (; k > 0; --k) w &= w - 1;  // drop the k lowest set bits
      return static_cast<std::uint32_t>(i * 64 + std::countr_zero(w));
    }
    return std::nullopt;
  }
  // Rarest first. The scan starts at a random piece (wrapping around), so
  // ties go to a piece at random, as libtorrent shuffles the pieces of
  // equal availability; a piece as rare as any in the swarm ends the search.
  const auto start = std::uniform_int_distribution<std::uint32_t>(0, s_.pieces - 1)(s_.rng);
  const std::size_t first = start / 64;
  const std::uint64_t from_start = ~std::uint64_t{0} << (start % 64);
  std::optional<std::uint32_t> best;
  std::uint32_t best_holders = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t step = 0; step <= words; ++step) {
    const std::size_t i = (first + step) % words;
    std::uint64_t w = bits(i);
    if (step == 0) w &= from_start;       // the first word from `start` on
    if (step == words) w &= ~from_start;  // and its bits before `start`, last
    for (; w; w &= w - 1) {
      const auto p = static_cast<std::uint32_t>(i * 64 + std::countr_zero(w));
      if (s_.holders[p] < best_holders) {
        best = p;
        best_holders = s_.holders[p];
        if (best_holders <= s_.MinHolders()) return best;
      }
    }
  }
  return best;
}

void BitTorrentRepair::Start(std::uint32_t u, std::uint32_t v, std::uint32_t piece, double since) {
  NodeState& down = s_.nodes[v];
  const FlowId id = s_.net.Start(s_.topology.Path(u, v), BitTorrentPieceBytes(s_.PieceBytes(piece)),
                                 {FlowKind::kBitTorrent, u, v, piece}, s_.now);
  s_.nodes[u].uploads.push_back({v, since, id, piece});
  if (down.fetching.test(piece)) down.doubled.set(piece);
  down.fetching.set(piece);
  down.fetches.push_back({piece, id, u});
  UpdateOpen(u);
}

double BitTorrentRepair::FreeSlot(std::uint32_t u, std::uint32_t v, FlowId id,
                                  std::uint32_t piece) {
  NodeState& up = s_.nodes[u];
  NodeState& down = s_.nodes[v];
  double since = s_.now;
  for (std::size_t i = 0; i < up.uploads.size(); ++i) {
    if (up.uploads[i].flow != id) continue;
    since = up.uploads[i].since;
    up.uploads[i] = up.uploads.back();
    up.uploads.pop_back();
    break;
  }
  std::erase_if(down.fetches, [&](const Fetch& f) { return f.flow == id; });
  const auto left = std::count_if(down.fetches.begin(), down.fetches.end(),
                                  [&](const Fetch& f) { return f.piece == piece; });
  if (left < 2) down.doubled.reset(piece);
  if (left < 1) down.fetching.reset(piece);
  UpdateOpen(u);
  return since;
}

void BitTorrentRepair::UpdateOpen(std::uint32_t u) {
  const NodeState& n = s_.nodes[u];
  const bool open = n.joined && !n.gone && n.have_count > 0 &&
                    n.uploads.size() < s_.config.upload_slots && (u != kSeed || s_.seed_present);
  if (open) {
    s_.open_uploaders.insert(u);
  } else {
    s_.open_uploaders.erase(u);
  }
}

std::optional<std::uint32_t> BitTorrentRepair::Choose(
    const RackedSet& pool, std::uint32_t near, const std::function<bool(std::uint32_t)>& fits,
    const std::function<std::size_t(std::uint32_t)>& load) {
  if (pool.racked()) {
    if (auto id = BestOf(pool.rack(s_.topology.rack(near)), s_.rng, fits, load)) return id;
  }
  return BestOf(pool.all(), s_.rng, fits, load);
}

bool BitTorrentRepair::FillUploads(std::uint32_t u) {
  bool started = false;
  const auto fits = [&](std::uint32_t v) { return MayServe(u, v) && Wants(u, v); };
  const auto load = [&](std::uint32_t v) { return s_.nodes[v].fetches.size(); };
  while (s_.open_uploaders.contains(u) && !s_.incomplete.all().empty()) {
    const auto v = Choose(s_.incomplete, u, fits, load);
    const auto piece = v ? PickPiece(u, *v) : std::nullopt;
    if (!piece) break;
    Start(u, *v, *piece, s_.now);
    started = true;
  }
  return started;
}

bool BitTorrentRepair::FillDownloads(std::uint32_t v) {
  bool started = false;
  const auto fits = [&](std::uint32_t u) { return MayServe(u, v) && Wants(u, v); };
  const auto load = [&](std::uint32_t u) { return s_.nodes[u].uploads.size(); };
  while (!s_.open_uploaders.all().empty()) {
    const NodeState& down = s_.nodes[v];
    if (!down.joined || down.complete) break;
    if (s_.config.max_downloads && down.fetches.size() >= s_.config.max_downloads) break;
    const auto u = Choose(s_.open_uploaders, v, fits, load);
    const auto piece = u ? PickPiece(*u, v) : std::nullopt;
    if (!piece) break;
    Start(*u, v, *piece, s_.now);
    started = true;
  }
  return started;
}

void BitTorrentRepair::OnJoin(std::uint32_t node) {
  UpdateOpen(node);
  FillDownloads(node);
}

void BitTorrentRepair::OnVerified(std::uint32_t node, std::uint32_t piece) {
  NodeState& n = s_.nodes[node];
  // Every fetch of it still in flight (one, or more in the end game) is
  // cancelled, as libtorrent cancels outstanding requests.
  while (n.fetching.test(piece)) {
    const auto it = std::find_if(n.fetches.begin(), n.fetches.end(),
                                 [&](const Fetch& f) { return f.piece == piece; });
    const Fetch f = *it;
    s_.bytes.cut += s_.net.Cancel(f.flow, s_.now);
    FreeSlot(f.from, node, f.flow, piece);
    FillUploads(f.from);
  }
  UpdateOpen(node);
  FillUploads(node);    // a finished node goes on serving
  FillDownloads(node);  // nothing once finished
}

void BitTorrentRepair::OnFlowDone(const FinishedFlow& flow, const std::function<void()>& deliver) {
  const std::uint32_t u = flow.tag.src;
  const std::uint32_t v = flow.tag.dst;
  const double since = FreeSlot(u, v, flow.id, flow.tag.piece);
  deliver();
  // An unchoke lasts: the slot stays with this peer while it wants more.
  if (s_.now - since < s_.config.unchoke_interval && MayServe(u, v)) {
    if (const auto piece = PickPiece(u, v)) Start(u, v, *piece, since);
  }
  FillUploads(u);
  FillDownloads(v);
}

void BitTorrentRepair::OnSeedLeaves() {
  NodeState& seed = s_.nodes[kSeed];
  std::vector<UploadSlot> cut = seed.uploads;
  for (const UploadSlot& slot : cut) {
    s_.bytes.cut += s_.net.Cancel(slot.flow, s_.now);
    FreeSlot(kSeed, slot.peer, slot.flow, slot.piece);
  }
  s_.open_uploaders.erase(kSeed);
  for (const UploadSlot& slot : cut) FillDownloads(slot.peer);
}

bool BitTorrentRepair::Retry() {
  bool started = false;
  const std::vector<std::uint32_t> open = s_.open_uploaders.all().items();
  for (std::uint32_t u : open) started |= FillUploads(u);
  return started;
}

}  // namespace swarmcast::sim

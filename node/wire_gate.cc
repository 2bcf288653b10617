#include "node/wire_gate.h"

#include <libtorrent/error_code.hpp>
#include <libtorrent/extensions.hpp>
#include <libtorrent/operations.hpp>
#include <libtorrent/peer_connection_handle.hpp>
#include <string>

namespace swarmcast::node {
namespace {

class GatedPeer final : public lt::peer_plugin {
 public:
  GatedPeer(lt::peer_connection_handle pc, std::shared_ptr<const ServedByPush> served)
      : pc_(std::move(pc)), served_(std::move(served)), ip_(pc_.remote().address().to_string()) {}

  lt::string_view type() const override { return "swarmcast_wire_gate"; }

  bool on_interested() override {
    if (!(*served_)(ip_)) return false;
    withheld_ = true;  // handled: libtorrent never records the interest
    return true;
  }

  // libtorrent unchokes a new connection before it says INTERESTED when
  // upload slots are free ("preemptive unchoke"), so a pushed peer may be
  // unchoked when its first request comes. Choking it here makes
  // libtorrent reject this request and every later one (the receiver then
  // asks someone else at once), instead of serving them.
  bool on_request(const lt::peer_request&) override {
    if (!pc_.is_choked() && (*served_)(ip_)) pc_.choke_this_peer();
    return false;
  }

  void tick() override {
    if (pc_.is_disconnecting() || pc_.is_connecting()) return;
    const bool pushed = (*served_)(ip_);
    if ((pushed && pc_.is_peer_interested()) || (!pushed && withheld_)) {
      // Its interest predates the subscription, or the subscription ended:
      // start over, so the gate sees the peer's INTERESTED again.
      pc_.disconnect(lt::errors::make_error_code(lt::errors::timed_out_no_interest),
                     lt::operation_t::bittorrent);
    } else if (pushed && !pc_.is_choked()) {
      pc_.choke_this_peer();
    }
  }

 private:
  lt::peer_connection_handle pc_;
  std::shared_ptr<const ServedByPush> served_;
  std::string ip_;
  bool withheld_ = false;
};

class GatedTorrent final : public lt::torrent_plugin {
 public:
  explicit GatedTorrent(std::shared_ptr<const ServedByPush> served) : served_(std::move(served)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(const lt::peer_connection_handle& pc) override {
    return std::make_shared<GatedPeer>(pc, served_);
  }

 private:
  std::shared_ptr<const ServedByPush> served_;
};

class WireGate final : public lt::plugin {
 public:
  explicit WireGate(ServedByPush served)
      : served_(std::make_shared<const ServedByPush>(std::move(served))) {}
  std::shared_ptr<lt::torrent_plugin> new_torrent(const lt::torrent_handle&,
                                                  lt::client_data_t) override {
    return std::make_shared<GatedTorrent>(served_);
  }

 private:
  std::shared_ptr<const ServedByPush> served_;
};

}  // namespace

std::shared_ptr<lt::plugin> MakeWireGate(ServedByPush served_by_push) {
  return std::make_shared<WireGate>(std::move(served_by_push));
}

}  // namespace swarmcast::node

#include "node/cli/push_options.h"

namespace swarmcast::node::cli {

void AddPushSeedOptions(po::options_description& d, PushSeedFlags& f) {
  d.add_options()("no-push", po::bool_switch(&f.no_push),
                  "do not push pieces to LAN peers (serve them over BitTorrent only)")(
      "push-listen", po::value(&f.listen)->default_value(f.listen),
      "ADDR:PORT for the push channel (port 0: any free port)")(
      "push-advertise", po::value(&f.advertise),
      "IP address published for the push channel (default: the one facing the tracker)")(
      "fanout", po::value(&f.fanout)->default_value(f.fanout),
      "how one piece goes to many sockets: auto (kmod if /dev/swarmfan opens, else splice), "
      "kmod, splice, sendfile or copy")(
      "push-in-flight", po::value(&f.in_flight)->default_value(f.in_flight),
      "fan-out: with more subscribers than this, at most this many at once hold pushed bytes they "
      "have "
      "not acknowledged, so pieces arrive whole one after another and can be re-served sooner "
      "(0: no limit, every subscriber at once)")(
      "push-topology", po::value(&f.topology)->default_value(f.topology),
      "chain: push to the first subscriber alone, and each takes every piece from the one "
      "before it, one flow per link at its full rate (the registry records it, and gets take "
      "a link's role from there); fan-out: push to every subscriber, which re-serve over "
      "BitTorrent (or forward, with get --forward)")("push-chain", po::bool_switch(&f.chain_switch),
                                                     "the same as --push-topology chain")(
      "push-token", po::value(&f.tokens)->composing(),
      "push only to subscribers whose HELLO carries this token (repeatable; give a private "
      "tracker's announce tokens: gets present their --token); default: any subscriber");
}

void AddPushGetOptions(po::options_description& d, PushGetFlags& f) {
  d.add_options()("no-push", po::bool_switch(&f.no_push),
                  "do not subscribe to the seed's push channel")(
      "forward", po::bool_switch(&f.forward),
      "with a fan-out seed (seed --push-topology fan-out): forward the pieces the seed "
      "pushes to the other subscribers, by push, and take theirs (Mutualcast; measured "
      "faster up to 8 receivers and with a seed on a faster link, slower from 16)")(
      "chain", po::bool_switch(&f.chain),
      "be a link of a seed's chain (its default topology): forward every piece to the next "
      "node, and "
      "join the BitTorrent wire only when the chain brings nothing for 3 s or the download is "
      "complete (implies --forward); a get takes this role from the registry's record of "
      "the seed, so only a --push-from get needs it")(
      "push-from", po::value(&f.from),
      "subscribe to this push endpoint (ADDR:PORT) even if it is not on this subnet");
}

}  // namespace swarmcast::node::cli

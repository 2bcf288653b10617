"""Stock BitTorrent client against swarmcast-tracker: Debian's libtorrent
2.0 (python3-libtorrent) publishes a v1 torrent to the registry, seeds it,
and a second session downloads it having learnt the seed only from the
tracker. DHT, local peer discovery, UPnP and NAT-PMP are off.

usage: /usr/bin/python3 libtorrent_client.py WORKDIR http://127.0.0.1:PORT TOKEN_FILE
(TOKEN_FILE: the tracker's admin token, which publishing needs.)
Exit 0 and prints "leecher complete" on success."""
import os
import sys
import time
import urllib.request

import libtorrent as lt

work, base, token_file = sys.argv[1], sys.argv[2], sys.argv[3]
with open(token_file) as f:
    token = f.read().strip()
seed_dir = os.path.join(work, "seed")
leech_dir = os.path.join(work, "leech")
os.makedirs(seed_dir)
os.makedirs(leech_dir)
with open(os.path.join(seed_dir, "lt.bin"), "wb") as f:
    f.write(os.urandom(300_000))

fs = lt.file_storage()
lt.add_files(fs, os.path.join(seed_dir, "lt.bin"))
ct = lt.create_torrent(fs, 16384, flags=lt.create_torrent.v1_only)
ct.add_tracker(base + "/announce")
lt.set_piece_hashes(ct, seed_dir)
torrent = lt.bencode(ct.generate())
req = urllib.request.Request(base + "/v1/swarms/lt-test", data=torrent, method="PUT",
                             headers={"Authorization": "Bearer " + token})
print("publish", urllib.request.urlopen(req).status)


def session():
    return lt.session({
        "listen_interfaces": "127.0.0.1:0",
        "enable_dht": False, "enable_lsd": False,
        "enable_upnp": False, "enable_natpmp": False,
        "allow_multiple_connections_per_ip": True,
        "enable_incoming_utp": False, "enable_outgoing_utp": False,
        "alert_mask": lt.alert.category_t.all_categories,
    })


# The leecher fetches the metainfo back from the registry, as a node would.
fetched = urllib.request.urlopen(base + "/v1/swarms/lt-test/torrent").read()
assert fetched == torrent, "registry returned different bytes"

seed, leech = session(), session()
seed.add_torrent({"ti": lt.torrent_info(lt.bdecode(torrent)), "save_path": seed_dir})
time.sleep(0.5)  # the seed announces first, so the leecher's reply has it
leech.add_torrent({"ti": lt.torrent_info(lt.bdecode(fetched)), "save_path": leech_dir})
deadline = time.time() + 30
while time.time() < deadline:
    for s, who in ((seed, "seed"), (leech, "leech")):
        for a in s.pop_alerts():
            if isinstance(a, (lt.tracker_reply_alert, lt.tracker_error_alert)):
                print(who, a.message())
    h = leech.get_torrents()[0]
    if h.status().is_seeding:
        print("leecher complete")
        # Tell the tracker: the completed event is sent on the next announce.
        h.force_reannounce()
        time.sleep(0.5)
        sys.exit(0)
    time.sleep(0.1)
print("timeout; leecher state", leech.get_torrents()[0].status().state)
sys.exit(1)

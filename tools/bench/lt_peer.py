#!/usr/bin/python3
"""A stock libtorrent peer for the swarm benchmark (Debian python3-libtorrent).

  lt_peer.py make-torrent FILE OUT.torrent ANNOUNCE_URL
  lt_peer.py run seed|get TORRENT DIR --listen IP:PORT

Settings are libtorrent's defaults except what the benchmark must change:
DHT, local peer discovery, UPnP and NAT-PMP off (nothing may leave the
emulated LAN) and uTP off (TCP only; on this machine uTP was slower at every
swarm size, see /work/shared/notes/anchor-tools.md). Prints READY when a
seed has checked its data, DONE when a download has finished (and keeps
serving others until killed), and every 0.25 s a line
"STAT <progress 0..1> <payload uploaded> <payload downloaded>".
Must run under /usr/bin/python3: that is the interpreter the Debian module is
built for.
"""

import os
import signal
import sys
import time

import libtorrent as lt


def make_torrent(path, out, announce):
    fs = lt.file_storage()
    lt.add_files(fs, path)
    ct = lt.create_torrent(fs, 0, flags=lt.create_torrent.v1_only)
    ct.add_tracker(announce)
    lt.set_piece_hashes(ct, os.path.dirname(os.path.abspath(path)))
    with open(out, "wb") as f:
        f.write(lt.bencode(ct.generate()))


def run(role, torrent, directory, listen):
    settings = {
        "listen_interfaces": listen,
        "enable_dht": False,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        "enable_outgoing_utp": False,
        "enable_incoming_utp": False,
        "alert_mask": lt.alert.category_t.error_notification
        | lt.alert.category_t.status_notification,
    }
    ses = lt.session(settings)
    atp = lt.add_torrent_params()
    atp.ti = lt.torrent_info(torrent)
    atp.save_path = directory
    h = ses.add_torrent(atp)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    announced = False
    next_stat = 0.0
    while not stop:
        # Woken by torrent_finished_alert at once; otherwise every 100 ms.
        ses.wait_for_alert(100)
        finished = False
        for a in ses.pop_alerts():
            if isinstance(a, lt.torrent_finished_alert):
                finished = True
            else:
                print(f"ALERT {a.message()}", file=sys.stderr, flush=True)
        s = h.status()
        if not announced and (finished or s.is_seeding):
            print("READY" if role == "seed" else "DONE", flush=True)
            announced = True
        now = time.monotonic()
        if now >= next_stat:
            print(f"STAT {s.progress:.4f} {s.total_payload_upload} {s.total_payload_download}",
                  flush=True)
            next_stat = now + 0.25
    s = h.status()
    print(f"STAT {s.progress:.4f} {s.total_payload_upload} {s.total_payload_download}", flush=True)


def main(argv):
    if len(argv) == 4 and argv[0] == "make-torrent":
        make_torrent(argv[1], argv[2], argv[3])
        return 0
    if len(argv) == 6 and argv[0] == "run" and argv[1] in ("seed", "get") and argv[4] == "--listen":
        run(argv[1], argv[2], argv[3], argv[5])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

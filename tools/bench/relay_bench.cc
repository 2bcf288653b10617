// swarmcast-bench-relay: the "relay" reference of the swarm benchmark, a
// TCP swarm with none of a real system's costs. It is static Mutualcast
// (Li, Chou and Zhang, 2005) with nothing else: the seed sends every block
// once, block b to receiver b mod N, and each receiver forwards the blocks
// it got from the seed to the N - 1 others with sendfile(2) from its own
// copy. Every uplink then carries at most one file's worth and every
// downlink exactly one, in N concurrent TCP flows per host, as in a swarm.
//
// There is no hashing, no piece picking, no tracker, no adaptation to a
// slow link and no repair of a lost peer (a dead receiver stalls the
// others). Where a system is behind it, the gap is that system's own
// cost; where it is far from size / link rate, the emulated LAN and the
// shared cores cost a TCP swarm that much. It is not a lower bound: its
// N - 1 flows per host, each of 1/(N - 1) of a link, do worse than an
// adaptive swarm's bounded peer sets at N = 32-64 (docs/benchmarks.md).
//
// With --chain the topology is a pipeline instead (as in Kascade or
// udpcast's TCP cousins): the seed sends every block to receiver 0, and
// receiver i forwards each block, once written, to receiver i + 1. Every
// link then carries one flow at its full rate, and a block is N hops from
// the seed, so small blocks (16 KiB by default) keep the pipeline short.
// It measures what a swarm would gain from fewer, faster flows per link.
//
//   swarmcast-bench-relay seed FILE --listen IP:PORT --clients N [--block BYTES] [--chain]
//   swarmcast-bench-relay recv SEED_IP:PORT --listen IP:PORT OUT
//
// Wire format, all integers big-endian:
//   receiver -> seed: its listen address (4-byte IPv4, 2-byte port);
//   seed -> receiver: "SCRL", size (8), N (4), its index (4), block (4),
//     chain (4: 0 or 1), N listen addresses (6 each), then the receiver's
//     own blocks in order (with chain: every block to receiver 0, none to
//     the others);
//   receiver j -> receiver k: j (4), then j's own blocks in order (with
//     chain: k = j + 1, and every block).
// Each receiver prints "DONE <size>" once every byte is written, then
// finishes forwarding and exits 0. Any failure ends the process at once
// with exit 1 and a message: with a static schedule there is nothing to
// recover, and no thread is left waiting.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_io.h"

namespace {

using swarmcast::bench::ParseAddr;
using swarmcast::bench::ReadExact;
using swarmcast::bench::WriteAll;

constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 40;
constexpr std::uint32_t kMaxClients = 4096;
constexpr std::uint32_t kMinBlock = 4 << 10, kMaxBlock = 64 << 20;
constexpr char kMagic[4] = {'S', 'C', 'R', 'L'};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "swarmcast-bench-relay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::fflush(stderr);
  std::_Exit(1);
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: swarmcast-bench-relay seed FILE --listen IP:PORT --clients N [--block BYTES]\n"
      "       swarmcast-bench-relay recv SEED_IP:PORT --listen IP:PORT OUT\n"
      "Static Mutualcast: the seed sends block b to receiver b mod N, which\n"
      "forwards it to the others. With --chain: the seed sends every block\n"
      "to receiver 0, receiver i forwards every block to receiver i + 1.\n"
      "The benchmark's relay reference.\n");
  return 2;
}

void Put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t Get(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// Which blocks receiver `index` of `n` owns: index, index + n, ...
struct Layout {
  std::uint64_t size;
  std::uint32_t n, block;
  bool chain = false;
  // The blocks `index` receives from the seed and forwards: in a chain
  // every block passes every receiver, like a single owner's.
  Layout Owner() const { return chain ? Layout{size, 1, block} : *this; }
  std::uint64_t blocks() const { return (size + block - 1) / block; }
  std::uint64_t owned(std::uint32_t index) const {
    return index < blocks() ? (blocks() - index + n - 1) / n : 0;
  }
  std::uint64_t offset(std::uint32_t index, std::uint64_t k) const {
    return (index + k * n) * std::uint64_t{block};
  }
  std::size_t length(std::uint32_t index, std::uint64_t k) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(block, size - offset(index, k)));
  }
};

bool SendFileRange(int sock, int file, std::uint64_t offset, std::size_t len) {
  auto off = static_cast<off_t>(offset);
  while (len > 0) {
    const ssize_t n = ::sendfile(sock, file, &off, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

int ListenOn(const sockaddr_in& addr, int backlog, const std::string& what) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (s < 0 || ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(s, backlog) != 0) {
    Die("listen " + what);
  }
  return s;
}

int Seed(const std::string& path, const std::string& listen, long clients, long block_arg,
         bool chain) {
  const auto addr = ParseAddr(listen);
  if (!addr || clients < 1 || clients > kMaxClients || block_arg < 0 || block_arg > kMaxBlock) {
    return Usage();
  }
  ::signal(SIGPIPE, SIG_IGN);
  const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file < 0 || ::fstat(file, &st) != 0) Die("open " + path);
  const auto n = static_cast<std::uint32_t>(clients);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // Default: at least 16 blocks a receiver, so that forwarding overlaps the
  // seed's sending, within 16 KiB (a BitTorrent block) and 1 MiB. A chain
  // holds each block once per hop: 16 KiB.
  const auto block = static_cast<std::uint32_t>(
      block_arg > 0 ? std::max<long>(block_arg, kMinBlock)
      : chain       ? 16 << 10
                    : std::clamp<std::uint64_t>(size / (16 * std::uint64_t{n}), 16 << 10, 1 << 20));
  const Layout layout{size, n, block, chain};
  const int lsock = ListenOn(*addr, static_cast<int>(n), listen);
  std::printf("READY\n");
  std::fflush(stdout);

  // Every receiver's listen address first: each needs all of them.
  std::vector<int> socks;
  std::string addrs;
  for (std::uint32_t i = 0; i < n; ++i) {
    const int s = ::accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC);
    unsigned char hello[6];
    if (s < 0 || !ReadExact(s, hello, sizeof hello)) Die("a receiver's hello");
    addrs.append(reinterpret_cast<const char*>(hello), sizeof hello);
    socks.push_back(s);
  }
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      std::string header(kMagic, sizeof kMagic);
      Put(header, size, 8);
      Put(header, n, 4);
      Put(header, i, 4);
      Put(header, block, 4);
      Put(header, chain ? 1 : 0, 4);
      header += addrs;
      if (!WriteAll(socks[i], header.data(), header.size())) Die("header to a receiver");
      // In a chain, receiver 0 is the only one the seed sends blocks to.
      const Layout sends = layout.Owner();
      const std::uint32_t index = chain ? 0 : i;
      const std::uint64_t count = chain && i > 0 ? 0 : sends.owned(index);
      for (std::uint64_t k = 0; k < count; ++k) {
        if (!SendFileRange(socks[i], file, sends.offset(index, k), sends.length(index, k))) {
          Die("sending to receiver " + std::to_string(i));
        }
      }
      ::close(socks[i]);
    });
  }
  for (auto& t : threads) t.join();
  return 0;
}

// How many of a receiver's own blocks are written (its forwarders wait on
// that) and how many bytes of the file in all.
class Progress {
 public:
  void Written(std::size_t bytes, bool own) {
    std::lock_guard lock(mu_);
    own_ += own ? 1 : 0;
    written_ += bytes;
    cv_.notify_all();
  }
  void WaitOwn(std::uint64_t k) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return own_ > k; });
  }
  void WaitWritten(std::uint64_t size) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return written_ >= size; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t own_ = 0, written_ = 0;
};

bool PWriteAll(int file, const char* data, std::size_t len, std::uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pwrite(file, data, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    len -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

// Reads `index`'s blocks from `sock` in order into `file`; `own`: they come
// from the seed, and this receiver forwards each once it is written.
void ReceiveBlocks(int sock, int file, const Layout& layout, std::uint32_t index, bool own,
                   Progress& progress) {
  std::vector<char> buf(layout.block);
  for (std::uint64_t k = 0; k < layout.owned(index); ++k) {
    const std::size_t len = layout.length(index, k);
    if (!ReadExact(sock, buf.data(), len)) Die("receiving the blocks of " + std::to_string(index));
    if (!PWriteAll(file, buf.data(), len, layout.offset(index, k))) Die("write");
    progress.Written(len, own);
  }
}

// Connects to `peer`, introduces itself as `me`, and sends `index`'s
// blocks of `layout`, each once written.
void Forward(const sockaddr_in& peer, std::uint32_t me, int file, const Layout& layout,
             std::uint32_t index, Progress& progress) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string hello;
  Put(hello, me, 4);
  if (s < 0 || ::connect(s, reinterpret_cast<const sockaddr*>(&peer), sizeof peer) != 0 ||
      !WriteAll(s, hello.data(), hello.size())) {
    Die("connect to a receiver");
  }
  for (std::uint64_t b = 0; b < layout.owned(index); ++b) {
    progress.WaitOwn(b);
    if (!SendFileRange(s, file, layout.offset(index, b), layout.length(index, b))) {
      Die("forwarding to a receiver");
    }
  }
  ::close(s);
}

int Receive(const std::string& from, const std::string& listen, const std::string& out) {
  const auto seed = ParseAddr(from);
  const auto mine = ParseAddr(listen);
  if (!seed || !mine) return Usage();
  ::signal(SIGPIPE, SIG_IGN);
  const int lsock = ListenOn(*mine, static_cast<int>(kMaxClients), listen);
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || ::connect(sock, reinterpret_cast<const sockaddr*>(&*seed), sizeof *seed) != 0) {
    Die("connect " + from);
  }
  std::string hello;
  Put(hello, ntohl(mine->sin_addr.s_addr), 4);
  Put(hello, ntohs(mine->sin_port), 2);
  unsigned char head[28];
  if (!WriteAll(sock, hello.data(), hello.size()) || !ReadExact(sock, head, sizeof head)) {
    Die("seed handshake");
  }
  const Layout layout{Get(head + 4, 8), static_cast<std::uint32_t>(Get(head + 12, 4)),
                      static_cast<std::uint32_t>(Get(head + 20, 4)), Get(head + 24, 4) == 1};
  const auto me = static_cast<std::uint32_t>(Get(head + 16, 4));
  if (std::memcmp(head, kMagic, 4) != 0 || layout.size > kMaxSize || layout.n < 1 ||
      layout.n > kMaxClients || me >= layout.n || layout.block < kMinBlock ||
      layout.block > kMaxBlock || Get(head + 24, 4) > 1) {
    errno = EPROTO;
    Die("bad header from the seed");
  }
  std::vector<unsigned char> addrs(6 * std::size_t{layout.n});
  if (!ReadExact(sock, addrs.data(), addrs.size())) Die("the seed's address list");
  const int file = ::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file < 0 || ::ftruncate(file, static_cast<off_t>(layout.size)) != 0) Die("open " + out);

  auto address = [&](std::uint32_t k) {
    sockaddr_in peer{};
    peer.sin_family = AF_INET;
    peer.sin_addr.s_addr = htonl(static_cast<std::uint32_t>(Get(&addrs[6 * k], 4)));
    peer.sin_port = htons(static_cast<std::uint16_t>(Get(&addrs[6 * k + 4], 2)));
    return peer;
  };
  // What this receiver forwards: its own blocks (Mutualcast), every block
  // (a chain). Index `own` of layout `forwards`.
  const Layout forwards = layout.Owner();
  const std::uint32_t own = layout.chain ? 0 : me;

  Progress progress;
  std::vector<std::thread> threads;
  if (layout.chain) {
    if (me + 1 < layout.n) {
      threads.emplace_back([&] { Forward(address(me + 1), me, file, forwards, own, progress); });
    }
    int from_previous = sock;  // receiver 0 reads from the seed
    if (me > 0) {
      from_previous = ::accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC);
      unsigned char idx[4];
      if (from_previous < 0 || !ReadExact(from_previous, idx, sizeof idx)) {
        Die("accepting the previous receiver");
      }
      if (Get(idx, 4) != me - 1) {
        errno = EPROTO;
        Die("not the previous receiver: index " + std::to_string(Get(idx, 4)));
      }
    }
    ReceiveBlocks(from_previous, file, forwards, own, true, progress);
  } else {
    // Every other receiver connects to us, sends its index, then its blocks.
    threads.emplace_back([&] {
      std::vector<std::thread> readers;
      std::vector<bool> seen(layout.n);
      seen[me] = true;
      for (std::uint32_t i = 0; i + 1 < layout.n; ++i) {
        const int s = ::accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC);
        unsigned char idx[4];
        if (s < 0 || !ReadExact(s, idx, sizeof idx)) Die("accepting a receiver");
        const auto j = static_cast<std::uint32_t>(Get(idx, 4));
        if (j >= layout.n || seen[j]) {
          errno = EPROTO;
          Die("a receiver sent index " + std::to_string(j));
        }
        seen[j] = true;
        readers.emplace_back([&, s, j] {
          ReceiveBlocks(s, file, layout, j, false, progress);
          ::close(s);
        });
      }
      for (auto& t : readers) t.join();
    });
    // We connect to every other and forward each of our blocks once written.
    for (std::uint32_t k = 0; k < layout.n; ++k) {
      if (k == me) continue;
      threads.emplace_back([&, k] { Forward(address(k), me, file, forwards, own, progress); });
    }
    ReceiveBlocks(sock, file, layout, me, true, progress);
  }
  progress.WaitWritten(layout.size);
  std::printf("DONE %llu\n", static_cast<unsigned long long>(layout.size));
  std::fflush(stdout);
  for (auto& t : threads) t.join();
  if (::close(file) != 0) Die("close " + out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool chain = !args.empty() && args.back() == "--chain";
  if (chain) args.pop_back();
  if ((args.size() == 6 || args.size() == 8) && args[0] == "seed" && args[2] == "--listen" &&
      args[4] == "--clients" && (args.size() == 6 || args[6] == "--block")) {
    return Seed(args[1], args[3], std::strtol(args[5].c_str(), nullptr, 10),
                args.size() == 8 ? std::strtol(args[7].c_str(), nullptr, 10) : 0, chain);
  }
  if (!chain && args.size() == 5 && args[0] == "recv" && args[2] == "--listen") {
    return Receive(args[1], args[3], args[4]);
  }
  return Usage();
}

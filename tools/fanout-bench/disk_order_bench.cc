// disk-order-bench: out-of-order push vs per-receiver sequential reads when
// the file does not fit in the seed's page cache.
//
// The seed runs in a child process inside a memory cgroup (cgroup v1) that
// caps its page cache below the file size; caches are dropped before each
// run. N receivers join one after another. Two seeds, one run each:
//   sequential  every receiver gets the file from byte 0 on its own
//               connection (sendfile, one thread each), as a plain file
//               server would serve it: each reads the disk at its own offset
//   push        a PushSender: one cyclic scan, each piece read once and sent
//               to every receiver lacking it (fan-out)
// Reported: total time until every receiver has every byte, the seed's
// bytes read from storage (/proc/PID/io read_bytes), and disk MB/s. After
// out-of-order-transfers.txt in shared/seeds. Needs root (drop_caches,
// cgroups).
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "node/push/push_sender.h"
#include "node/push/tcp.h"
#include "tools/fanout-bench/discard_receivers.h"

namespace po = boost::program_options;
using namespace swarmcast;

namespace {

const char* kCgroup = "/sys/fs/cgroup/memory/swarmcast-disk-order-bench";

bool WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

std::uint64_t ReadBytesOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  for (std::string key; in >> key;) {
    std::uint64_t value;
    in >> value;
    if (key == "read_bytes:") return value;
  }
  return 0;
}

// A plain file server: each connection gets the whole file from byte 0.
[[noreturn]] void SequentialSeed(const std::string& path, push::UniqueFd listener) {
  const int flags = ::fcntl(listener.get(), F_GETFL);
  ::fcntl(listener.get(), F_SETFL, flags & ~O_NONBLOCK);
  while (true) {
    const int c = ::accept(listener.get(), nullptr, nullptr);
    if (c < 0) continue;
    std::thread([c, path] {
      const int fd = ::open(path.c_str(), O_RDONLY);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      off_t off = 0;
      while (::sendfile(c, fd, &off, 1 << 20) > 0) {
      }
      ::close(fd);
      ::close(c);
    }).detach();
  }
}

[[noreturn]] void PushSeed(const push::PushSource& source, std::uint16_t port) {
  push::PushSenderOptions options;
  options.bind_address = "127.0.0.1";
  options.port = port;
  options.fanout = push::FanoutKind::kSplice;
  // Every receiver of the benchmark connects from 127.0.0.1.
  options.max_connections_per_address = options.max_subscribers;
  auto sender = push::PushSender::Start(source, options, proto::Logger());
  if (!sender) {
    std::cerr << "disk-order-bench: " << sender.error() << "\n";
    _exit(1);
  }
  while (true) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, modes_arg;
  std::uint64_t size_mib, cache_mib;
  std::uint32_t piece_kib;
  int receivers, join_ms;
  po::options_description opts(
      "disk-order-bench: out-of-order push vs sequential per-receiver reads from a seed whose\n"
      "page cache is smaller than the file (needs root)\n\nOptions");
  opts.add_options()("help,h", "show this help")("dir", po::value(&dir)->default_value("/var/tmp"),
                                                 "where to write the test file")(
      "size-mib", po::value(&size_mib)->default_value(1024), "file size")(
      "cache-mib", po::value(&cache_mib)->default_value(128), "seed memory cgroup limit")(
      "piece-kib", po::value(&piece_kib)->default_value(1024), "piece length")(
      "receivers", po::value(&receivers)->default_value(8), "number of receivers")(
      "join-ms", po::value(&join_ms)->default_value(500), "interval between joins")(
      "modes", po::value(&modes_arg)->default_value("sequential,push"), "what to run");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "disk-order-bench: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  ::signal(SIGPIPE, SIG_IGN);
  ::mkdir(kCgroup, 0755);
  if (!WriteFile(std::string(kCgroup) + "/memory.limit_in_bytes",
                 std::to_string(cache_mib << 20))) {
    std::cerr << "disk-order-bench: cannot set up the memory cgroup " << kCgroup
              << " (root and cgroup v1 needed)\n";
    return 1;
  }

  const std::string path = dir + "/disk-order-bench-" + std::to_string(::getpid()) + ".bin";
  {
    std::ofstream out(path, std::ios::binary);
    std::mt19937_64 rng(3);
    std::vector<std::uint64_t> block(1 << 17);
    for (std::uint64_t written = 0; written < (size_mib << 20); written += block.size() * 8) {
      for (auto& w : block) w = rng();
      out.write(reinterpret_cast<const char*>(block.data()), block.size() * 8);
    }
  }
  const std::uint64_t size = size_mib << 20;
  const push::PushSource source = bench::SingleFileSource(path, size, piece_kib << 10, 0xd1);
  proto::Hello hello;
  hello.info_hash = source.info_hash;
  hello.geometry = source.layout->geometry();
  hello.bitfield.assign(proto::BitfieldSize(hello.geometry.piece_count), 0);
  std::vector<std::uint8_t> hello_bytes(proto::EncodedSize(hello));
  (void)proto::EncodeHello(hello, hello_bytes);
  const std::string hello_frame(hello_bytes.begin(), hello_bytes.end());

  std::printf(
      "file %llu MiB, seed page cache capped at %llu MiB, %d receivers joining every %d ms\n",
      static_cast<unsigned long long>(size_mib), static_cast<unsigned long long>(cache_mib),
      receivers, join_ms);
  std::printf("%-11s %9s %14s %12s %10s\n", "mode", "seconds", "disk read MiB", "disk MB/s",
              "last join->done");
  std::stringstream modes(modes_arg);
  int status_all = 0;
  for (std::string mode; std::getline(modes, mode, ',');) {
    ::sync();
    WriteFile("/proc/sys/vm/drop_caches", "3");
    auto listener = push::ListenTcp("127.0.0.1", 0);
    if (!listener) {
      std::cerr << listener.error() << "\n";
      return 1;
    }
    const pid_t seed = ::fork();
    if (seed == 0) {
      WriteFile(std::string(kCgroup) + "/cgroup.procs", std::to_string(::getpid()));
      if (mode == "sequential") SequentialSeed(path, std::move(listener->fd));
      listener->fd.reset();  // PushSender binds its own socket on this port
      PushSeed(source, listener->port);
    }
    listener->fd.reset();
    if (mode == "push") std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const bool push_mode = mode == "push";
    const std::uint64_t expected =
        push_mode ? bench::PushedBytes(source, hello_frame.size()) : size;
    const auto done =
        bench::RunDiscardReceivers(listener->port, receivers, std::chrono::milliseconds(join_ms),
                                   push_mode ? hello_frame : std::string(), expected);
    const std::uint64_t read = ReadBytesOf(seed);
    ::kill(seed, SIGKILL);
    ::waitpid(seed, nullptr, 0);
    if (done.empty()) {
      std::fprintf(stderr, "disk-order-bench: %s: receivers failed\n", mode.c_str());
      status_all = 1;
      continue;
    }
    const double total = *std::max_element(done.begin(), done.end());
    std::printf("%-11s %9.2f %14.0f %12.1f %10.2f\n", mode.c_str(), total, read / 1048576.0,
                read / 1e6 / total, total - (receivers - 1) * join_ms / 1000.0);
    std::fflush(stdout);
  }
  std::remove(path.c_str());
  ::rmdir(kCgroup);
  return status_all;
}

// fanout-bench: the seed's CPU cost per byte for each fan-out backend.
//
// One seed (a real PushSender, in this process) pushes a file that is in
// the page cache to N subscribers over loopback; the subscribers live in a
// child process and discard what they read (recv with MSG_TRUNC), so the
// seed's CPU is measured alone (getrusage of this process). For every
// backend and N: aggregate MB/s and seed CPU seconds per GB sent, side by
// side in one run. After samba-sendfile-freebsd.txt in shared/seeds.
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "node/push/push_sender.h"
#include "tools/fanout-bench/discard_receivers.h"

namespace po = boost::program_options;
using namespace swarmcast;

namespace {

std::string Encode(const proto::Message& m) {
  std::vector<std::uint8_t> out(proto::EncodedSize(m));
  (void)proto::EncodeMessage(m, out);
  return std::string(out.begin(), out.end());
}

struct Row {
  std::string backend;
  int receivers;
  double seconds;
  double cpu;
  std::uint64_t bytes;
};

}  // namespace

int main(int argc, char** argv) {
  std::string file, backends_arg, counts_arg;
  std::uint64_t size_mib;
  std::uint32_t piece_kib;
  int repeat;
  bool json = false;
  po::options_description opts(
      "fanout-bench: seed CPU per byte for each fan-out backend, over loopback\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "file", po::value(&file), "file to push (default: a generated temporary file)")(
      "size-mib", po::value(&size_mib)->default_value(256), "size of the generated file")(
      "piece-kib", po::value(&piece_kib)->default_value(1024), "piece length in KiB")(
      "backends", po::value(&backends_arg)->default_value("copy,sendfile,splice"),
      "comma-separated backends")("receivers",
                                  po::value(&counts_arg)->default_value("1,2,4,8,16,20"),
                                  "comma-separated receiver counts")(
      "repeat", po::value(&repeat)->default_value(1), "runs per cell; the median is kept")(
      "json", po::bool_switch(&json), "print JSON lines instead of a table");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "fanout-bench: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  ::signal(SIGPIPE, SIG_IGN);

  std::string temp;
  if (file.empty()) {
    temp = "/tmp/fanout-bench-" + std::to_string(::getpid()) + ".bin";
    std::ofstream out(temp, std::ios::binary);
    std::mt19937_64 rng(1);
    std::vector<std::uint64_t> block(1 << 17);
    for (std::uint64_t written = 0; written < (size_mib << 20); written += block.size() * 8) {
      for (auto& w : block) w = rng();
      out.write(reinterpret_cast<const char*>(block.data()), block.size() * 8);
    }
    file = temp;
  }
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) {
    std::cerr << "fanout-bench: cannot open " << file << "\n";
    return 1;
  }
  const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
  // Warm the page cache: the benchmark is about CPU, not the disk.
  in.seekg(0);
  std::vector<char> sink(1 << 20);
  while (in.read(sink.data(), sink.size()) || in.gcount() > 0) {
  }

  const push::PushSource source = bench::SingleFileSource(file, size, piece_kib << 10, 0x5c);
  proto::Hello hello;
  hello.info_hash = source.info_hash;
  hello.geometry = source.layout->geometry();
  hello.bitfield.assign(proto::BitfieldSize(hello.geometry.piece_count), 0);
  const std::uint64_t expected = bench::PushedBytes(source, Encode(hello).size());

  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
    return out;
  };
  std::vector<Row> rows;
  for (const auto& name : split(backends_arg)) {
    const auto kind = push::ParseFanoutKind(name);
    if (!kind) {
      std::cerr << "fanout-bench: unknown backend '" << name << "'\n";
      return 2;
    }
    for (const auto& count : split(counts_arg)) {
      const int n = std::stoi(count);
      std::vector<Row> runs;
      for (int r = 0; r < repeat; ++r) {
        push::PushSenderOptions options;
        options.bind_address = "127.0.0.1";
        options.fanout = *kind;
        // Every receiver of the benchmark connects from 127.0.0.1.
        options.max_connections_per_address = options.max_subscribers;
        auto sender = push::PushSender::Start(source, options, proto::Logger());
        if (!sender) {
          std::cerr << "fanout-bench: " << sender.error() << "\n";
          return 1;
        }
        const double cpu0 = bench::ProcessCpuSeconds();
        const auto t0 = std::chrono::steady_clock::now();
        const pid_t child = ::fork();
        if (child == 0) {
          // Receivers in a child process, so that this process's CPU time
          // is the seed's alone.
          const auto done = bench::RunDiscardReceivers(
              (*sender)->port(), n, std::chrono::milliseconds(0), Encode(hello), expected);
          _exit(done.empty() ? 1 : 0);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double cpu = bench::ProcessCpuSeconds() - cpu0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          std::cerr << "fanout-bench: receivers failed (" << name << ", " << n << ")\n";
          return 1;
        }
        runs.push_back({name, n, secs, cpu, (*sender)->stats().payload_bytes});
      }
      std::sort(runs.begin(), runs.end(),
                [](const Row& a, const Row& b) { return a.seconds < b.seconds; });
      rows.push_back(runs[runs.size() / 2]);
      const Row& row = rows.back();
      const double gb = static_cast<double>(row.bytes) / 1e9;
      if (json) {
        std::printf(
            "{\"backend\":\"%s\",\"receivers\":%d,\"seconds\":%.3f,\"mb_per_s\":%.1f,"
            "\"seed_cpu_s\":%.3f,\"cpu_s_per_gb\":%.3f}\n",
            row.backend.c_str(), n, row.seconds, row.bytes / 1e6 / row.seconds, row.cpu,
            row.cpu / gb);
      } else {
        std::printf("%-9s %3d receivers  %8.1f MB/s  seed CPU %6.3f s/GB\n", row.backend.c_str(), n,
                    row.bytes / 1e6 / row.seconds, row.cpu / gb);
      }
      std::fflush(stdout);
    }
  }
  if (!temp.empty()) std::remove(temp.c_str());
  return 0;
}

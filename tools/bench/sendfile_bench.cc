// swarmcast-bench-sendfile: the "plain server" baseline of the swarm
// benchmark (seeds/p2pkp-vs-sendfile.txt). The seed accepts connections and
// serves each one concurrently from its own thread with sendfile(2), as a
// plain file server would; its uplink is shared by all of them, so the last
// of N receivers finishes after about N * size / bandwidth.
//
//   swarmcast-bench-sendfile serve FILE --listen IP:PORT --clients N
//   swarmcast-bench-sendfile recv IP:PORT OUT
//
// Wire format: 8-byte big-endian file size, then the file's bytes. The
// receiver refuses sizes above 1 TiB and fails unless it got exactly that
// many bytes. Exit 0 on success, 1 on any failure (with a message).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int Fail(const std::string& what) {
  std::fprintf(stderr, "swarmcast-bench-sendfile: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: swarmcast-bench-sendfile serve FILE --listen IP:PORT --clients N\n"
               "       swarmcast-bench-sendfile recv IP:PORT OUT\n"
               "The seed serves N receivers concurrently with sendfile(2), then exits.\n");
  return 2;
}

// Sends the size header and the whole file to one connected socket.
bool ServeOne(int sock, int file, std::uint64_t size) {
  unsigned char header[8];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(size >> (56 - 8 * i));
  if (!WriteAll(sock, header, sizeof header)) return false;
  off_t offset = 0;
  while (static_cast<std::uint64_t>(offset) < size) {
    const std::size_t chunk = static_cast<std::size_t>(
        std::min<std::uint64_t>(size - static_cast<std::uint64_t>(offset), 1u << 30));
    const ssize_t n = ::sendfile(sock, file, &offset, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
  }
  return true;
}

int Serve(const std::string& path, const std::string& listen, int clients) {
  const auto addr = ParseAddr(listen);
  if (!addr || clients < 1 || clients > 4096) return Usage();
  // A receiver that dies (the bench's forwarder-kill cell) must end only its
  // own transfer (EPIPE), not the whole server: sendfile(2) takes no
  // MSG_NOSIGNAL.
  ::signal(SIGPIPE, SIG_IGN);
  const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file < 0) return Fail("open " + path);
  struct stat st {};
  if (::fstat(file, &st) != 0) return Fail("stat " + path);
  const int lsock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(lsock, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) {
    return Fail("bind " + listen);
  }
  if (::listen(lsock, clients) != 0) return Fail("listen");
  std::printf("READY\n");
  std::fflush(stdout);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    const int sock = ::accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC);
    if (sock < 0) return Fail("accept");
    threads.emplace_back([sock, file, &st, &failures] {
      if (!ServeOne(sock, file, static_cast<std::uint64_t>(st.st_size))) ++failures;
      ::close(sock);
    });
  }
  for (auto& t : threads) t.join();
  if (failures > 0) {
    std::fprintf(stderr, "swarmcast-bench-sendfile: %d transfers failed\n", failures.load());
    return 1;
  }
  return 0;
}

int Receive(const std::string& from, const std::string& out) {
  const auto addr = ParseAddr(from);
  if (!addr) return Usage();
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(sock, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) {
    return Fail("connect " + from);
  }
  unsigned char header[8];
  if (!ReadExact(sock, header, sizeof header)) return Fail("short header");
  std::uint64_t size = 0;
  for (unsigned char b : header) size = (size << 8) | b;
  if (size > kMaxSize) {
    std::fprintf(stderr, "swarmcast-bench-sendfile: refusing size %llu\n",
                 static_cast<unsigned long long>(size));
    return 1;
  }
  const int file = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file < 0) return Fail("open " + out);
  std::vector<char> buf(1 << 20);
  std::uint64_t total = 0;
  while (total < size) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - total));
    const ssize_t n = ::read(sock, buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail("read");
    if (n == 0) {
      std::fprintf(stderr, "swarmcast-bench-sendfile: connection closed after %llu of %llu\n",
                   static_cast<unsigned long long>(total), static_cast<unsigned long long>(size));
      return 1;
    }
    if (!WriteAll(file, buf.data(), static_cast<std::size_t>(n))) return Fail("write " + out);
    total += static_cast<std::uint64_t>(n);
  }
  if (::close(file) != 0) return Fail("close " + out);
  std::printf("DONE %llu\n", static_cast<unsigned long long>(total));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 6 && args[0] == "serve" && args[2] == "--listen" && args[4] == "--clients") {
    return Serve(args[1], args[3], std::atoi(args[5].c_str()));
  }
  if (args.size() == 3 && args[0] == "recv") return Receive(args[1], args[2]);
  return Usage();
}

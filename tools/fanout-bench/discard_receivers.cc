#include "tools/fanout-bench/discard_receivers.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <filesystem>

#include "node/push/tcp.h"

namespace swarmcast::bench {

double ProcessCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::vector<double> RunDiscardReceivers(std::uint16_t port, int n,
                                        std::chrono::milliseconds join_interval,
                                        const std::string& hello, std::uint64_t expected) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  push::UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  std::vector<push::UniqueFd> socks;
  std::vector<std::uint64_t> got(n, 0);
  std::vector<double> done_at(n, 0);
  int joined = 0, done = 0;
  epoll_event events[64];
  while (done < n) {
    // Open the next connection when its time has come.
    while (joined < n && Clock::now() - start >= join_interval * joined) {
      auto s = push::ConnectTcp("127.0.0.1:" + std::to_string(port), 5000);
      if (!s) return {};
      if (!hello.empty() &&
          ::send(s->get(), hello.data(), hello.size(), 0) != static_cast<ssize_t>(hello.size())) {
        return {};
      }
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = static_cast<std::uint32_t>(joined);
      ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s->get(), &ev);
      socks.push_back(std::move(*s));
      ++joined;
    }
    int wait_ms = 60000;
    if (joined < n) {
      const auto next = start + join_interval * joined;
      wait_ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count());
      wait_ms = std::max(wait_ms, 0);
    }
    const int k = ::epoll_wait(ep.get(), events, 64, wait_ms);
    if (k < 0) return {};
    if (k == 0 && joined == n) return {};  // a minute without data
    for (int e = 0; e < k; ++e) {
      const auto i = events[e].data.u32;
      const ssize_t r = ::recv(socks[i].get(), nullptr, 1 << 20, MSG_TRUNC | MSG_DONTWAIT);
      if (r <= 0) return {};
      got[i] += static_cast<std::uint64_t>(r);
      if (got[i] > expected) return {};
      if (got[i] == expected) {
        ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, socks[i].get(), nullptr);
        done_at[i] = std::chrono::duration<double>(Clock::now() - start).count();
        ++done;
      }
    }
  }
  return done_at;
}

push::PushSource SingleFileSource(const std::string& path, std::uint64_t size, std::uint32_t piece,
                                  std::uint8_t hash_byte) {
  const proto::Geometry g{static_cast<std::uint32_t>((size + piece - 1) / piece), piece, size};
  const std::filesystem::path p = std::filesystem::absolute(path);
  push::PushSource source;
  source.root = p.parent_path();
  source.layout = std::make_shared<const proto::ContentLayout>(
      *proto::ContentLayout::SingleFile(g, p.filename().string()));
  source.info_hash.assign(20, hash_byte);
  return source;
}

std::uint64_t PushedBytes(const push::PushSource& source, std::size_t hello_bytes) {
  std::uint64_t frames = 0;
  for (std::uint32_t p = 0; p < source.layout->geometry().piece_count; ++p) {
    frames += source.layout->ChunksOf(p).size();
  }
  return hello_bytes + frames * proto::kPieceHeaderSize + source.layout->geometry().total_size;
}

}  // namespace swarmcast::bench

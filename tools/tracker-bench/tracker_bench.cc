// tracker-bench: announce load against a BitTorrent tracker, for comparing
// swarmcast-tracker with opentracker under the same load.
//
// Simulates S swarms x P peers on 127.0.0.1 (each peer its own port and
// peer id). First every peer announces once (event=started) so the swarms
// are full; then, for the measured run, `--concurrency` clients announce in
// a loop (HTTP with a new connection per request, HTTP keep-alive, or UDP
// BEP 15), optionally paced to `--rate` announces per second. Prints
// announces/s and latency percentiles; `--json` for scripts.
//
// Single-threaded on purpose: one core for the load, the other for the
// tracker under test.
#include <algorithm>
#include <boost/asio.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using udp = net::ip::udp;
using Clock = std::chrono::steady_clock;

namespace {

enum class Mode { kHttpNew, kHttpKeepAlive, kUdp };

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 6969;
  Mode mode = Mode::kHttpNew;
  int swarms = 10000;
  int peers = 20;
  int concurrency = 32;
  double duration = 10;
  double rate = 0;  // announces/s, 0 = as fast as possible
  int numwant = 50;
  std::string path = "/announce";
  bool populate = true;
  // Leechers report less left at every announce, as downloading peers do
  // (each such announce is a change the tracker writes to SQLite); off:
  // the same left every time.
  bool progress = false;
  bool json = false;
};

// The info-hash of swarm i: 20 bytes any tracker accepts; the same
// function writes opentracker's whitelist (--print-hashes).
std::array<unsigned char, 20> InfoHash(int i) {
  std::array<unsigned char, 20> h{};
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1);
  for (int k = 0; k < 20; ++k) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    h[static_cast<std::size_t>(k)] = static_cast<unsigned char>(x >> 56);
  }
  return h;
}

std::string PeerId(int peer) {
  char buf[21];
  std::snprintf(buf, sizeof buf, "-TB0001-%012d", peer);
  return std::string(buf, 20);
}

std::string Escape(const unsigned char* p, std::size_t n) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += '%';
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

struct Stats {
  std::vector<std::uint32_t> latency_us;
  std::uint64_t ok = 0, failed = 0, timeouts = 0, reconnects = 0;
};

class Bench {
 public:
  Bench(net::io_context& io, Options o)
      : io_(io),
        o_(std::move(o)),
        target_tcp_(net::ip::make_address(o_.host), o_.port),
        target_udp_(net::ip::make_address(o_.host), o_.port) {
    total_peers_ = o_.swarms * o_.peers;
    for (int s = 0; s < o_.swarms; ++s) {
      auto h = InfoHash(s);
      hash_escaped_.push_back(Escape(h.data(), h.size()));
      hash_raw_.push_back(std::string(reinterpret_cast<char*>(h.data()), 20));
    }
  }

  // What peer `n` reports left: a third are seeds; with --progress the
  // others' left goes down with every announce sent.
  std::uint64_t Left(int n) const {
    if (n % 3 == 0) return 0;
    if (!o_.progress) return 1000000;
    return (std::uint64_t{1} << 40) - 1000 * ++sent_;
  }

  // Announce of peer `n` (swarm n % S): the HTTP request line.
  std::string HttpRequest(int n, bool started, bool keep_alive) const {
    int swarm = n % o_.swarms;
    std::string r = "GET " + o_.path +
                    "?info_hash=" + hash_escaped_[static_cast<std::size_t>(swarm)] +
                    "&peer_id=" + PeerId(n) + "&port=" + std::to_string(10000 + n % 50000) +
                    "&uploaded=0&downloaded=0&left=" + std::to_string(Left(n)) +
                    "&compact=1&numwant=" + std::to_string(o_.numwant) +
                    (started ? "&event=started" : "") + " HTTP/1.1\r\nHost: " + o_.host +
                    (keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    return r;
  }
  std::string UdpAnnounce(int n, std::uint64_t conn, std::uint32_t tx, bool started) const {
    std::string p;
    auto put = [&p](std::uint64_t v, int bytes) {
      for (int i = bytes - 1; i >= 0; --i) p += static_cast<char>(v >> (8 * i));
    };
    put(conn, 8);
    put(1, 4);
    put(tx, 4);
    p += hash_raw_[static_cast<std::size_t>(n % o_.swarms)];
    p += PeerId(n);
    put(0, 8);
    put(Left(n), 8);
    put(0, 8);
    put(started ? 2 : 0, 4);
    put(0, 4);
    put(static_cast<std::uint64_t>(n), 4);
    put(static_cast<std::uint32_t>(o_.numwant), 4);
    put(static_cast<std::uint64_t>(10000 + n % 50000), 2);
    return p;
  }

  // Next peer to announce; during population each peer exactly once.
  bool NextPeer(int& n, bool& started) {
    if (populating_) {
      if (next_populate_ >= total_peers_) return false;
      n = next_populate_++;
      started = true;
      return true;
    }
    if (Clock::now() >= end_) return false;
    n = static_cast<int>(rng_() % static_cast<std::uint64_t>(total_peers_));
    started = false;
    return true;
  }
  // Pacing: when the next request of a client may start.
  Clock::time_point Slot() {
    if (populating_ || o_.rate <= 0) return Clock::now();
    auto step =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o_.rate));
    next_slot_ = std::max(next_slot_ + step, Clock::now() - std::chrono::milliseconds(50));
    return next_slot_;
  }
  void Record(Clock::time_point start, bool ok) {
    if (populating_) {
      ok ? ++populate_ok_ : ++populate_failed_;
      return;
    }
    if (!ok) {
      ++stats_.failed;
      return;
    }
    ++stats_.ok;
    stats_.latency_us.push_back(static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()));
  }

  void Run();

  net::io_context& io_;
  const Options o_;
  tcp::endpoint target_tcp_;
  udp::endpoint target_udp_;
  int total_peers_;
  std::vector<std::string> hash_escaped_, hash_raw_;
  bool populating_ = true;
  int next_populate_ = 0;
  mutable std::uint64_t sent_ = 0;  // announces built (--progress)
  std::uint64_t populate_ok_ = 0, populate_failed_ = 0;
  Clock::time_point end_, next_slot_;
  std::mt19937_64 rng_{42};
  Stats stats_;
  int active_ = 0;
};

// A response is good when it is HTTP 200 with a bencoded peers list (a
// `failure reason` counts as failed).
bool GoodHttp(const std::string& in) {
  return in.compare(0, 12, "HTTP/1.1 200") == 0 || in.compare(0, 12, "HTTP/1.0 200") == 0
             ? in.find("5:peers") != std::string::npos
             : false;
}

class HttpClient : public std::enable_shared_from_this<HttpClient> {
 public:
  HttpClient(Bench& b, bool keep_alive)
      : b_(b), keep_alive_(keep_alive), socket_(b.io_), timer_(b.io_) {}
  void Next() {
    int n;
    bool started;
    if (!b_.NextPeer(n, started)) return Done();
    request_ = b_.HttpRequest(n, started, keep_alive_);
    auto at = b_.Slot();
    timer_.expires_at(at);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code) { self->Send(true); });
  }

 private:
  void Send(bool restart_clock = true) {
    if (restart_clock) start_ = Clock::now();
    in_.clear();
    reused_ = socket_.is_open();
    if (!socket_.is_open()) {
      socket_.async_connect(b_.target_tcp_,
                            [self = shared_from_this()](boost::system::error_code ec) {
                              if (ec) return self->Fail();
                              self->socket_.set_option(tcp::no_delay(true), ec);
                              self->Write();
                            });
      return;
    }
    Write();
  }
  void Write() {
    net::async_write(socket_, net::buffer(request_),
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                       if (ec) return self->Fail();
                       self->Read();
                     });
  }
  void Read() {
    socket_.async_read_some(net::buffer(buf_), [self = shared_from_this()](
                                                   boost::system::error_code ec, std::size_t n) {
      self->in_.append(self->buf_.data(), n);
      if (ec && self->in_.empty() && self->reused_) {
        // A keep-alive connection the server had already closed (opentracker
        // closes after every response): reconnect and send again.
        self->Close();
        ++self->b_.stats_.reconnects;
        self->reused_ = false;
        return self->Send(/*restart_clock=*/false);
      }
      if (ec) {
        // The server closed: a complete response ends here (opentracker
        // closes after every response).
        bool ok = !self->in_.empty() && GoodHttp(self->in_);
        self->Close();
        self->b_.Record(self->start_, ok);
        return self->Next();
      }
      if (self->Complete()) {
        bool ok = GoodHttp(self->in_);
        if (!self->keep_alive_ || !self->server_keeps_alive_) self->Close();
        self->b_.Record(self->start_, ok);
        return self->Next();
      }
      self->Read();
    });
  }
  bool Complete() {
    auto end = in_.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    auto cl = in_.find("Content-Length: ");
    if (cl == std::string::npos || cl > end) cl = in_.find("content-length: ");
    if (cl == std::string::npos || cl > end) return false;  // wait for close
    std::size_t len = std::strtoul(in_.c_str() + cl + 16, nullptr, 10);
    server_keeps_alive_ = in_.find("Connection: close") == std::string::npos &&
                          in_.find("connection: close") == std::string::npos &&
                          in_.compare(0, 8, "HTTP/1.1") == 0;
    return in_.size() >= end + 4 + len;
  }
  void Fail() {
    Close();
    b_.Record(start_, false);
    Next();
  }
  void Close() {
    boost::system::error_code ec;
    socket_.close(ec);
  }
  void Done() {
    Close();
    --b_.active_;
  }

  Bench& b_;
  const bool keep_alive_;
  tcp::socket socket_;
  net::steady_timer timer_;
  std::string request_, in_;
  std::array<char, 4096> buf_;
  Clock::time_point start_;
  bool server_keeps_alive_ = true;
  bool reused_ = false;  // this request went out on an already open connection
};

class UdpClient : public std::enable_shared_from_this<UdpClient> {
 public:
  explicit UdpClient(Bench& b) : b_(b), socket_(b.io_), timer_(b.io_), pace_(b.io_) {
    socket_.open(b.target_udp_.protocol());
    socket_.connect(b.target_udp_);
  }
  void Next() {
    int n;
    bool started;
    if (!b_.NextPeer(n, started)) {
      --b_.active_;
      return;
    }
    n_ = n;
    started_ = started;
    pace_.expires_at(b_.Slot());
    pace_.async_wait([self = shared_from_this()](boost::system::error_code) {
      self->start_ = Clock::now();
      self->Send();
    });
  }

 private:
  void Send() {
    ++tx_;
    if (!have_conn_ || Clock::now() - conn_time_ > std::chrono::seconds(50)) {
      out_.clear();
      for (int i = 7; i >= 0; --i) out_ += static_cast<char>(0x41727101980ULL >> (8 * i));
      out_.append(4, '\0');
      for (int i = 3; i >= 0; --i) out_ += static_cast<char>(tx_ >> (8 * i));
      connecting_ = true;
    } else {
      out_ = b_.UdpAnnounce(n_, conn_, tx_, started_);
      connecting_ = false;
    }
    socket_.async_send(net::buffer(out_), [](boost::system::error_code, std::size_t) {});
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this(), tx = tx_](boost::system::error_code ec) {
      if (ec || tx != self->tx_) return;
      ++self->b_.stats_.timeouts;
      self->socket_.cancel();
    });
    socket_.async_receive(net::buffer(buf_),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                            self->timer_.cancel();
                            if (ec) {  // timeout: count a failure, move on
                              self->b_.Record(self->start_, false);
                              return self->Next();
                            }
                            self->OnReply(n);
                          });
  }
  void OnReply(std::size_t n) {
    auto get32 = [this](std::size_t at) {
      return std::uint32_t{static_cast<unsigned char>(buf_[at])} << 24 |
             std::uint32_t{static_cast<unsigned char>(buf_[at + 1])} << 16 |
             std::uint32_t{static_cast<unsigned char>(buf_[at + 2])} << 8 |
             static_cast<unsigned char>(buf_[at + 3]);
    };
    if (n < 8 || get32(4) != tx_) {
      b_.Record(start_, false);
      return Next();
    }
    if (connecting_) {
      if (n < 16 || get32(0) != 0) {
        b_.Record(start_, false);
        return Next();
      }
      conn_ = 0;
      for (int i = 8; i < 16; ++i)
        conn_ = conn_ << 8 | static_cast<unsigned char>(buf_[static_cast<std::size_t>(i)]);
      have_conn_ = true;
      conn_time_ = Clock::now();
      return Send();  // the announce itself; latency includes the connect
    }
    b_.Record(start_, n >= 20 && get32(0) == 1);
    Next();
  }

  Bench& b_;
  udp::socket socket_;
  net::steady_timer timer_, pace_;
  std::string out_;
  std::array<char, 2048> buf_;
  std::uint32_t tx_ = 0;
  std::uint64_t conn_ = 0;
  bool have_conn_ = false, connecting_ = false, started_ = false;
  Clock::time_point conn_time_, start_;
  int n_ = 0;
};

void Bench::Run() {
  auto launch = [this](int clients) {
    active_ = clients;
    for (int i = 0; i < clients; ++i) {
      if (o_.mode == Mode::kUdp) {
        std::make_shared<UdpClient>(*this)->Next();
      } else {
        std::make_shared<HttpClient>(*this, o_.mode == Mode::kHttpKeepAlive)->Next();
      }
    }
    io_.run();
    io_.restart();
  };
  if (o_.populate) {
    auto t0 = Clock::now();
    launch(o_.concurrency);
    if (!o_.json) {
      std::fprintf(stderr, "populated %d swarms x %d peers: %llu ok, %llu failed in %.1f s\n",
                   o_.swarms, o_.peers, static_cast<unsigned long long>(populate_ok_),
                   static_cast<unsigned long long>(populate_failed_),
                   std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  populating_ = false;
  stats_.latency_us.reserve(4u << 20);
  auto t0 = Clock::now();
  end_ =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.duration));
  next_slot_ = t0;
  launch(o_.concurrency);
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  auto& l = stats_.latency_us;
  std::sort(l.begin(), l.end());
  auto pct = [&l](double p) {
    return l.empty() ? 0.0
                     : l[std::min(l.size() - 1,
                                  static_cast<std::size_t>(p * static_cast<double>(l.size())))] /
                           1000.0;
  };
  const char* mode = o_.mode == Mode::kUdp       ? "udp"
                     : o_.mode == Mode::kHttpNew ? "http-new"
                                                 : "http-keepalive";
  double rate = static_cast<double>(stats_.ok) / secs;
  if (o_.json) {
    std::printf(
        "{\"mode\":\"%s\",\"swarms\":%d,\"peers_per_swarm\":%d,\"concurrency\":%d,"
        "\"target_rate\":%.0f,\"seconds\":%.2f,\"ok\":%llu,\"failed\":%llu,\"timeouts\":%llu,"
        "\"reconnects\":%llu,\"announces_per_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
        "\"p999_ms\":%.3f,\"populate_ok\":%llu,\"populate_failed\":%llu}\n",
        mode, o_.swarms, o_.peers, o_.concurrency, o_.rate, secs,
        static_cast<unsigned long long>(stats_.ok), static_cast<unsigned long long>(stats_.failed),
        static_cast<unsigned long long>(stats_.timeouts),
        static_cast<unsigned long long>(stats_.reconnects), rate, pct(0.5), pct(0.99), pct(0.999),
        static_cast<unsigned long long>(populate_ok_),
        static_cast<unsigned long long>(populate_failed_));
  } else {
    std::printf("%s: %.0f announces/s, p50 %.3f ms, p99 %.3f ms (%llu ok, %llu failed, %.1f s)\n",
                mode, rate, pct(0.5), pct(0.99), static_cast<unsigned long long>(stats_.ok),
                static_cast<unsigned long long>(stats_.failed), secs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  Options o;
  std::string mode = "http-new", target = "127.0.0.1:6969";
  po::options_description desc(
      "tracker-bench: announce load against a BitTorrent tracker on this machine.\n"
      "Usage: tracker-bench --target 127.0.0.1:PORT --mode http-new|http-keepalive|udp\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help,h", "this help")
    ("target", po::value(&target)->default_value(target), "tracker IPv4:PORT")
    ("path", po::value(&o.path)->default_value(o.path), "announce path (HTTP)")
    ("mode", po::value(&mode)->default_value(mode),
     "http-new (new connection per announce, like real clients), http-keepalive, udp")
    ("swarms", po::value(&o.swarms)->default_value(o.swarms), "swarms")
    ("peers", po::value(&o.peers)->default_value(o.peers), "peers per swarm")
    ("concurrency", po::value(&o.concurrency)->default_value(o.concurrency),
     "announces in flight")
    ("duration", po::value(&o.duration)->default_value(o.duration), "measured seconds")
    ("rate", po::value(&o.rate)->default_value(o.rate), "announces/s to offer (0: as fast as possible)")
    ("numwant", po::value(&o.numwant)->default_value(o.numwant), "peers asked for")
    ("no-populate", "skip announcing every peer once before measuring")
    ("progress", "leechers report less left at every announce (downloading peers)")
    ("print-hashes", "print the swarms' info-hashes as hex, one a line (opentracker whitelist), and exit")
    ("json", "one JSON line of results");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "tracker-bench: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (o.swarms < 1 || o.peers < 1 || o.concurrency < 1 || o.duration <= 0 ||
      static_cast<long long>(o.swarms) * o.peers > 50'000'000) {
    std::cerr << "tracker-bench: bad sizes\n";
    return 2;
  }
  if (vm.count("print-hashes")) {
    static const char kHex[] = "0123456789abcdef";
    for (int s = 0; s < o.swarms; ++s) {
      auto h = InfoHash(s);
      std::string line;
      for (unsigned char c : h) {
        line += kHex[c >> 4];
        line += kHex[c & 15];
      }
      std::cout << line << "\n";
    }
    return 0;
  }
  o.mode = mode == "udp"              ? Mode::kUdp
           : mode == "http-keepalive" ? Mode::kHttpKeepAlive
                                      : Mode::kHttpNew;
  if (mode != "udp" && mode != "http-keepalive" && mode != "http-new") {
    std::cerr << "tracker-bench: unknown --mode " << mode << "\n";
    return 2;
  }
  auto colon = target.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "tracker-bench: --target wants IPv4:PORT\n";
    return 2;
  }
  o.host = target.substr(0, colon);
  o.port = static_cast<unsigned short>(std::stoi(target.substr(colon + 1)));
  o.populate = !vm.count("no-populate");
  o.progress = vm.count("progress") > 0;
  o.json = vm.count("json") > 0;
  try {
    net::io_context io(1);
    Bench b(io, o);
    b.Run();
  } catch (const std::exception& e) {
    std::cerr << "tracker-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

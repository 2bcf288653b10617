#include "tests/tracker/tracker_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "proto/bencode.h"

namespace swarmcast::tracker::testing {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int Connect(const std::string& host, std::uint16_t port, int type, const std::string& source) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = type;
  hints.ai_flags = AI_NUMERICHOST;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = socket(res->ai_family, res->ai_socktype, 0);
  if (fd >= 0 && !source.empty()) {
    addrinfo* src = nullptr;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    if (getaddrinfo(source.c_str(), "0", &hints, &src) != 0 ||
        bind(fd, src->ai_addr, src->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
    if (src) freeaddrinfo(src);
  }
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

namespace {

bool WaitReadable(int fd, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, static_cast<int>(left.count())) > 0;
}

}  // namespace

TrackerProcess::TrackerProcess() {
  char tmpl[] = "/tmp/swarmcast-tracker-test-XXXXXX";
  if (mkdtemp(tmpl)) dir_ = tmpl;
}

TrackerProcess::~TrackerProcess() {
  Crash();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

bool TrackerProcess::Start(const std::vector<std::string>& args, const std::string& listen) {
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    error_ = "pipe failed";
    return false;
  }
  std::vector<std::string> argv_s = {SWARMCAST_TRACKER_BIN, "--listen", listen, "--db",
                                     dir_ + "/tracker.db",  "--json"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const std::string err_path = dir_ + "/stderr.log";
  pid_ = fork();
  if (pid_ == 0) {
    if (nofile_limit_ > 0) {
      rlimit rl{static_cast<rlim_t>(nofile_limit_), static_cast<rlim_t>(nofile_limit_)};
      if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(126);
    }
    if (capture_stderr_) {
      int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
      close(fd);
    }
    dup2(pipefd[1], 1);
    close(pipefd[0]);
    close(pipefd[1]);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipefd[1]);
  out_fd_ = pipefd[0];
  // The first line says where it listens (or why it could not).
  std::string line;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos && WaitReadable(out_fd_, deadline)) {
    char buf[512];
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  std::smatch m;
  static const std::regex kAddr(R"re("addresses":\["(\[[^\]]+\]|[0-9.]+):([0-9]+)")re");
  if (!std::regex_search(line, m, kAddr)) {
    error_ = "tracker did not start: " + line;
    // A refusal to start ends the process by itself: keep its exit code.
    const auto exit_deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < exit_deadline) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
        pid_ = -1;
        break;
      }
      poll(nullptr, 0, 20);
    }
    Crash();
    return false;
  }
  host_ = m[1].str();
  if (host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
  port_ = static_cast<std::uint16_t>(std::stoi(m[2].str()));
  return true;
}

std::string TrackerProcess::StderrText() const {
  std::ifstream in(dir_ + "/stderr.log", std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TrackerProcess::admin_token() const {
  std::ifstream in(dir_ + "/tracker.db.token", std::ios::binary);
  std::string token;
  std::getline(in, token);
  return token;
}

void TrackerProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  if (out_fd_ >= 0) close(out_fd_);
  out_fd_ = -1;
}

void TrackerProcess::Crash() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (out_fd_ >= 0) close(out_fd_);
  out_fd_ = -1;
}

HttpResult RawHttp(const std::string& host, std::uint16_t port, const std::string& raw,
                   std::chrono::milliseconds timeout, bool read_to_close,
                   const std::string& source) {
  HttpResult r;
  int fd = Connect(host, port, SOCK_STREAM, source);
  if (fd < 0) return r;
  auto deadline = Clock::now() + timeout;
  signal(SIGPIPE, SIG_IGN);
  send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
  std::string in;
  std::size_t need = std::string::npos;
  while (in.size() < need && WaitReadable(fd, deadline)) {
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
    if (!read_to_close) need = ResponseSize(in);
  }
  close(fd);
  return ParseHttpResponse(in);
}

std::size_t ResponseSize(const std::string& in) {
  const std::size_t hdr_end = in.find("\r\n\r\n");
  if (hdr_end == std::string::npos) return std::string::npos;
  std::smatch m;
  const std::string head = in.substr(0, hdr_end);
  static const std::regex kLen(R"((?:^|\r\n)[Cc]ontent-[Ll]ength: *([0-9]+))");
  if (!std::regex_search(head, m, kLen)) return std::string::npos;
  return hdr_end + 4 + std::stoul(m[1].str());
}

HttpResult ParseHttpResponse(const std::string& in) {
  HttpResult r;
  std::smatch m;
  static const std::regex kStatus(R"(^HTTP/1\.[01] ([0-9]{3}))");
  if (!std::regex_search(in, m, kStatus)) return r;
  r.status = std::stoi(m[1].str());
  std::size_t hdr_end = in.find("\r\n\r\n");
  if (hdr_end == std::string::npos) return r;
  std::string head = in.substr(0, hdr_end);
  static const std::regex kType(R"(\r\n[Cc]ontent-[Tt]ype: *([^\r]*))");
  if (std::regex_search(head, m, kType)) r.content_type = m[1].str();
  r.body = in.substr(hdr_end + 4);
  return r;
}

HttpResult HttpGet(const std::string& host, std::uint16_t port, const std::string& target) {
  return RawHttp(host, port, "GET " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
}

HttpResult HttpGetFrom(const std::string& source, const std::string& host, std::uint16_t port,
                       const std::string& target) {
  return RawHttp(host, port, "GET " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                 std::chrono::milliseconds(3000), false, source);
}

HttpResult HttpPut(const std::string& host, std::uint16_t port, const std::string& target,
                   const std::string& body, const std::string& extra_headers) {
  return RawHttp(host, port,
                 "PUT " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + extra_headers +
                     "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

std::string UdpExchange(const std::string& host, std::uint16_t port, const std::string& datagram,
                        std::chrono::milliseconds timeout) {
  int fd = Connect(host, port, SOCK_DGRAM, "");
  if (fd < 0) return {};
  send(fd, datagram.data(), datagram.size(), 0);
  std::string out;
  if (WaitReadable(fd, Clock::now() + timeout)) {
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) out.assign(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

std::string UrlEncode(const std::string& bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Bytes20(char c, int n) {
  std::string s(20, c);
  s[19] = static_cast<char>('0' + n % 10);
  s[18] = static_cast<char>('0' + n / 10 % 10);
  return s;
}

std::string AnnounceTarget(const std::string& ih, const std::string& pid, int port,
                           std::int64_t left, const std::string& extra) {
  return "/announce?info_hash=" + UrlEncode(ih) + "&peer_id=" + UrlEncode(pid) +
         "&port=" + std::to_string(port) + "&uploaded=0&downloaded=0&left=" + std::to_string(left) +
         extra;
}

}  // namespace swarmcast::tracker::testing

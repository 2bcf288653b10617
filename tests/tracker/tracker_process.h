// Test harness: a real swarmcast-tracker process on 127.0.0.1 with a
// database in a fresh temporary directory, and minimal blocking HTTP and
// UDP clients that talk to it over real sockets.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/tracker/test_torrent.h"

namespace swarmcast::tracker::testing {

class TrackerProcess {
 public:
  // Creates the temp directory; the database lives there across restarts.
  TrackerProcess();
  ~TrackerProcess();  // kills the process and removes the directory

  // Starts the binary with --listen 127.0.0.1:0 --db DIR/tracker.db --json
  // plus `args`; returns false (with `error()`, and `exit_code()` when the
  // process exited by itself) if it did not come up.
  bool Start(const std::vector<std::string>& args = {}, const std::string& listen = "127.0.0.1:0");
  // Before Start: the child's RLIMIT_NOFILE (soft and hard), set between
  // fork and exec; 0 keeps the test's own.
  void set_nofile_limit(std::uint64_t n) { nofile_limit_ = n; }
  // Before Start: the child's stderr goes to DIR/stderr.log (read it with
  // StderrText), by default; off, to the test's own stderr.
  void set_capture_stderr(bool on) { capture_stderr_ = on; }
  std::string StderrText() const;
  pid_t pid() const { return pid_; }

  void Stop();   // SIGTERM, wait
  void Crash();  // SIGKILL, wait: no clean shutdown
  bool running() const { return pid_ > 0; }

  // The admin token the tracker made at its first start (DIR/tracker.db.token,
  // the default --generated-token-file); empty when there is none.
  std::string admin_token() const;
  // "Authorization: Bearer <admin_token()>\r\n", for HttpPut's extra headers.
  std::string AuthHeader() const { return "Authorization: Bearer " + admin_token() + "\r\n"; }

  std::uint16_t port() const { return port_; }
  const std::string& host() const { return host_; }
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }
  int exit_code() const { return exit_code_; }  // -1: not known

 private:
  std::string dir_, host_, error_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  int out_fd_ = -1;
  std::uint64_t nofile_limit_ = 0;
  bool capture_stderr_ = true;  // DIR/stderr.log, so test output stays readable
};

struct HttpResult {
  int status = 0;  // 0: no response at all
  std::string content_type;
  std::string body;
};

// Sends `raw` bytes on a new connection and reads one response (until the
// server closes or Content-Length bytes arrived). Gives up after `timeout`.
// With read_to_close, reads everything until the server closes (the body
// then holds any further responses too).
// With `source`, the client socket is bound to that address first (any of
// 127.0.0.0/8 works on loopback), so a test can play another host.
HttpResult RawHttp(const std::string& host, std::uint16_t port, const std::string& raw,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(3000),
                   bool read_to_close = false, const std::string& source = "");
HttpResult HttpGet(const std::string& host, std::uint16_t port, const std::string& target);
// The response at the start of `in` (bytes as received); status 0 when
// there is none.
HttpResult ParseHttpResponse(const std::string& in);
// How many bytes the response at the start of `in` takes, once its header
// with a Content-Length is in; npos before that (or without one).
std::size_t ResponseSize(const std::string& in);
HttpResult HttpGetFrom(const std::string& source, const std::string& host, std::uint16_t port,
                       const std::string& target);

// A connected socket (SOCK_STREAM or SOCK_DGRAM) to host:port, bound to
// `source` first when it is not empty; -1 on failure.
int Connect(const std::string& host, std::uint16_t port, int type, const std::string& source = "");
HttpResult HttpPut(const std::string& host, std::uint16_t port, const std::string& target,
                   const std::string& body, const std::string& extra_headers = "");

// One datagram out, one back (empty on timeout).
std::string UdpExchange(const std::string& host, std::uint16_t port, const std::string& datagram,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

std::string UrlEncode(const std::string& bytes);

// 20 bytes of `c` ending in the two digits of `n`: a readable info-hash or
// peer id.
std::string Bytes20(char c, int n);
// "/announce?..." for info-hash `ih`, peer `pid` at `port` with `left`
// bytes to go; `extra` is appended ("&event=started").
std::string AnnounceTarget(const std::string& ih, const std::string& pid, int port,
                           std::int64_t left, const std::string& extra = "");

}  // namespace swarmcast::tracker::testing

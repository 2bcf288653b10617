#include "node/registry_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <optional>

#include "proto/endpoint.h"
#include "proto/hex.h"
#include "proto/metainfo.h"
#include "proto/sha256_text.h"

namespace swarmcast::node {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Json = nlohmann::json;

constexpr std::size_t kJsonLimit = 4u << 20;
// No metainfo the check would accept is larger.
constexpr std::size_t kTorrentLimit = proto::MetainfoLimits{}.max_bytes;

RegistryError Err(RegistryError::Kind kind, std::string msg, int status = 0) {
  return RegistryError{kind, status, std::move(msg)};
}

std::int64_t IntOr0(const Json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_number_integer()) ? it->get<std::int64_t>() : 0;
}
bool BoolOrFalse(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
std::string StrOrEmpty(const Json& j, const char* key) {
  auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

Result<Json, RegistryError> ParseObject(const std::string& body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Unexpected(Err(RegistryError::Kind::kBadResponse, "tracker sent invalid JSON"));
  }
  return j;
}

// Keys are names or hex info-hashes, validated by the caller; percent-encode
// anything else anyway so a path can never be smuggled in.
std::string EscapePath(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string TrackerUrl::ToString() const {
  return (https ? "https://" : "http://") +
         proto::FormatEndpoint(host, static_cast<std::uint16_t>(std::stoi(port))) + base_path;
}
std::string TrackerUrl::AnnounceUrl() const { return ToString() + "/announce"; }

Result<TrackerUrl, std::string> ParseTrackerUrl(std::string_view url) {
  const std::string original(url);
  TrackerUrl out;
  if (url.starts_with("https://")) {
    out.https = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return Unexpected("tracker URL must start with http:// or https:// (got '" + original + "')");
  }
  const std::size_t slash = url.find('/');
  std::string_view hostport = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = url.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.base_path = std::string(path);
  }
  auto at = proto::ParseEndpoint(
      hostport,
      {.allow_names = true, .default_port = static_cast<std::uint16_t>(out.https ? 443 : 80)});
  if (!at) return Unexpected("tracker URL '" + original + "': " + at.error());
  out.host = std::move(at->host);
  out.port = std::to_string(at->port);
  return out;
}

std::string ToString(const RegistryError& e) {
  if (e.http_status == 401) {
    return "tracker: HTTP 401: " + e.message +
           " (give the tracker's token: --token-file FILE, --token or $SWARMCAST_TOKEN)";
  }
  if (e.http_status != 0)
    return "tracker: HTTP " + std::to_string(e.http_status) + ": " + e.message;
  return "tracker: " + e.message;
}

RegistryClient::RegistryClient(TrackerUrl url, std::chrono::milliseconds timeout, std::string token,
                               ClientTlsContext tls)
    : url_(std::move(url)), timeout_(timeout), token_(std::move(token)), tls_(std::move(tls)) {}

Result<RegistryClient::Response, RegistryError> RegistryClient::Request(const std::string& method,
                                                                        const std::string& target,
                                                                        const std::string& body,
                                                                        std::size_t body_limit) {
  if (url_.https && !tls_) {
    return Unexpected(
        Err(RegistryError::Kind::kUnreachable, "no TLS context for " + url_.ToString()));
  }
  // Async operations on a private io_context run for at most the timeout:
  // Beast's sync calls have no deadline of their own. The TLS layer reads
  // and writes through `stream`, so the same deadline bounds its
  // handshake.
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  std::optional<asio::ssl::stream<beast::tcp_stream&>> tls;
  if (url_.https) {
    tls.emplace(stream, *tls_);
    ExpectServerName(tls->native_handle(), url_.host);
  }
  asio::ip::tcp::resolver resolver(ioc);
  const http::verb verb = method == "PUT"      ? http::verb::put
                          : method == "DELETE" ? http::verb::delete_
                                               : http::verb::get;
  http::request<http::string_body> req{verb, url_.base_path + target, 11};
  req.set(http::field::host, url_.host + ":" + url_.port);
  req.set(http::field::user_agent, "swarmcast/0.1");
  req.set(http::field::connection, "close");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (method == "PUT") {
    req.set(http::field::content_type,
            target.rfind("/v1/swarms", 0) == 0 ? "application/x-bittorrent" : "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_limit);
  parser.header_limit(16 * 1024);
  beast::error_code failure;
  std::string stage = "resolve";

  // Over either stream: the request, then the response.
  auto exchange = [&](auto& s) {
    stage = "send";
    http::async_write(s, req, [&](beast::error_code ec, std::size_t) {
      if (ec) {
        failure = ec;
        return;
      }
      stage = "read";
      http::async_read(s, buffer, parser, [&](beast::error_code ec2, std::size_t) {
        if (ec2) {
          failure = ec2;
          return;
        }
        stage = "done";
      });
    });
  };
  stream.expires_after(timeout_);
  resolver.async_resolve(url_.host, url_.port, [&](beast::error_code ec, auto results) {
    if (ec) {
      failure = ec;
      return;
    }
    stage = "connect";
    stream.async_connect(results, [&](beast::error_code ec2, auto) {
      if (ec2) {
        failure = ec2;
        return;
      }
      if (!tls) return exchange(stream);
      stage = "TLS handshake with";
      tls->async_handshake(asio::ssl::stream_base::client, [&](beast::error_code ec3) {
        if (ec3) {
          failure = ec3;
          return;
        }
        exchange(*tls);
      });
    });
  });
  ioc.run_for(timeout_ + std::chrono::milliseconds(200));
  if (stage != "done" && !failure) failure = asio::error::timed_out;
  if (failure) {
    // An error from OpenSSL itself (not the socket under it, not the
    // deadline) in the handshake is a verdict, not a passing fault.
    const bool refused = tls && stage == "TLS handshake with" &&
                         failure.category() == asio::error::get_ssl_category();
    const std::string why =
        refused ? HandshakeFailureText(tls->native_handle(), failure) : failure.message();
    return Unexpected(
        Err(refused ? RegistryError::Kind::kTlsRefused : RegistryError::Kind::kUnreachable,
            stage + " " + url_.ToString() + target + ": " + why));
  }
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  auto& res = parser.get();
  return Response{static_cast<int>(res.result_int()), std::move(res.body())};
}

namespace {

RegistryError StatusError(int status, const std::string& body) {
  std::string msg = "request failed";
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
    msg = j["error"].get<std::string>();
  }
  RegistryError::Kind kind = RegistryError::Kind::kRejected;
  if (status == 404) kind = RegistryError::Kind::kNotFound;
  if (status == 409) kind = RegistryError::Kind::kConflict;
  if (status == 401 || status == 403) kind = RegistryError::Kind::kDenied;
  return Err(kind, msg, status);
}

}  // namespace

Result<RegistryClient::Response, RegistryError> RegistryClient::Get(const std::string& target,
                                                                    std::size_t body_limit) {
  auto r = Request("GET", target, {}, body_limit);
  if (r && r->status != 200) return Unexpected(StatusError(r->status, r->body));
  return r;
}

Result<PublishResult, RegistryError> RegistryClient::Publish(const std::string& name,
                                                             const std::string& torrent_bytes,
                                                             const PublishFields& fields) {
  std::string target = "/v1/swarms/" + EscapePath(name);
  std::string query;
  if (!fields.push.empty()) query += "&push=" + EscapePath(fields.push);
  if (!fields.push.empty() && fields.push_chain) query += "&push_chain=1";
  if (!fields.sha256.empty()) query += "&sha256=" + EscapePath(fields.sha256);
  if (!query.empty()) target += "?" + query.substr(1);
  auto r = Request("PUT", target, torrent_bytes, kJsonLimit);
  if (!r) return Unexpected(r.error());
  if (r->status != 200 && r->status != 201) return Unexpected(StatusError(r->status, r->body));
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  PublishResult out;
  out.created = r->status == 201;
  out.name = StrOrEmpty(*j, "name");
  out.info_hash = StrOrEmpty(*j, "info_hash");
  out.previous = StrOrEmpty(*j, "previous");
  return out;
}

namespace {

SwarmInfo ToSwarmInfo(const Json& j) {
  SwarmInfo out;
  out.name = StrOrEmpty(j, "name");
  out.info_hash = StrOrEmpty(j, "info_hash");
  out.size = IntOr0(j, "size");
  out.seeders = IntOr0(j, "seeders");
  out.leechers = IntOr0(j, "leechers");
  out.completed = IntOr0(j, "completed");
  out.push = StrOrEmpty(j, "push");
  out.push_chain = BoolOrFalse(j, "push_chain");  // a tracker from before chains: none
  out.sha256 = proto::NormaliseSha256Hex(StrOrEmpty(j, "sha256")).value_or(std::string());
  out.created = IntOr0(j, "created");
  return out;
}

}  // namespace

Result<bool, RegistryError> RegistryClient::IsPrivate() {
  auto r = Request("GET", "/healthz", {}, kJsonLimit);
  if (!r) return Unexpected(r.error());
  if (r->status == 404) return false;
  if (r->status != 200) return Unexpected(StatusError(r->status, r->body));
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  auto it = j->find("private");
  return it != j->end() && it->is_boolean() && it->get<bool>();
}

Result<RegistryClient::JsonAnswer, RegistryError> RegistryClient::CallJson(
    const std::string& method, const std::string& target, const std::string& json_body) {
  auto r = Request(method, target, json_body, kJsonLimit);
  if (!r) return Unexpected(r.error());
  if (r->status < 200 || r->status > 299) return Unexpected(StatusError(r->status, r->body));
  return JsonAnswer{r->status, std::move(r->body)};
}

Result<UnpublishResult, RegistryError> RegistryClient::Unpublish(const std::string& name) {
  auto r = Request("DELETE", "/v1/swarms/" + EscapePath(name), {}, kJsonLimit);
  if (!r) return Unexpected(r.error());
  if (r->status != 200) return Unexpected(StatusError(r->status, r->body));
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  return UnpublishResult{StrOrEmpty(*j, "name"), StrOrEmpty(*j, "info_hash")};
}

Result<SwarmInfo, RegistryError> RegistryClient::GetSwarm(const std::string& key) {
  auto r = Get("/v1/swarms/" + EscapePath(key), kJsonLimit);
  if (!r) return Unexpected(r.error());
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  return ToSwarmInfo(*j);
}

Result<std::vector<SwarmInfo>, RegistryError> RegistryClient::ListSwarms() {
  auto r = Get("/v1/swarms", kJsonLimit);
  if (!r) return Unexpected(r.error());
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  std::vector<SwarmInfo> out;
  auto it = j->find("swarms");
  if (it == j->end() || !it->is_array()) {
    return Unexpected(RegistryError{RegistryError::Kind::kBadResponse, r->status,
                                    "tracker: the swarm list has no \"swarms\" array"});
  }
  for (const Json& s : *it) {
    if (!s.is_object()) continue;
    if (out.size() >= 100'000) break;
    out.push_back(ToSwarmInfo(s));
  }
  return out;
}

Result<std::string, RegistryError> RegistryClient::GetTorrent(const std::string& key) {
  auto r = Get("/v1/swarms/" + EscapePath(key) + "/torrent", kTorrentLimit);
  if (!r) return Unexpected(r.error());
  return std::move(r->body);
}

Result<CompletionView, RegistryError> RegistryClient::GetCompletion(const std::string& key) {
  auto r = Get("/v1/swarms/" + EscapePath(key) + "/completion", kJsonLimit);
  if (!r) return Unexpected(r.error());
  auto j = ParseObject(r->body);
  if (!j) return Unexpected(j.error());
  CompletionView out;
  out.total = IntOr0(*j, "total");
  out.done = IntOr0(*j, "done");
  out.running = IntOr0(*j, "running");
  out.stale = IntOr0(*j, "stale");
  auto it = j->find("stragglers");
  if (it != j->end() && it->is_array()) {
    for (const Json& s : *it) {
      if (!s.is_object()) continue;
      if (out.stragglers.size() >= 10'000) break;
      std::string peer = StrOrEmpty(s, "peer");
      if (peer.empty()) peer = StrOrEmpty(s, "peer_id");
      Straggler st{std::move(peer),      StrOrEmpty(s, "ip"),    IntOr0(s, "port"),
                   IntOr0(s, "left"),    IntOr0(s, "since"),     IntOr0(s, "last_announce"),
                   StrOrEmpty(s, "why"), StrOrEmpty(s, "reason")};
      // Bounded like the rest: a hostile tracker's text is cut, not printed whole.
      if (st.why.size() > 32) st.why.resize(32);
      if (st.reason.size() > 200) st.reason.resize(200);
      st.idle_seconds = IntOr0(s, "idle_seconds");
      st.rate = s.contains("rate") ? IntOr0(s, "rate") : -1;
      out.stragglers.push_back(std::move(st));
    }
  }
  return out;
}

}  // namespace swarmcast::node

#include "tracker/registry_handler.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "proto/endpoint.h"
#include "proto/hex.h"
#include "proto/sha256_text.h"
#include "tracker/query_parse.h"
#include "tracker/straggler.h"

namespace swarmcast::tracker {
namespace {

// The string, or null when it is empty.
Json StringOrNull(std::string_view s) { return s.empty() ? Json() : Json(s); }

Json SummaryJson(const SwarmSummary& s) {
  Json j;
  j["name"] = StringOrNull(s.entry ? std::string_view(s.entry->name) : std::string_view());
  j["info_hash"] = ToHex(s.info_hash);
  j["size"] = s.entry ? Json(s.entry->size) : Json();
  j["seeders"] = s.seeders;
  j["leechers"] = s.leechers;
  j["completed"] = s.completed;
  j["push"] = StringOrNull(s.entry ? std::string_view(s.entry->push) : std::string_view());
  j["push_chain"] = s.entry && s.entry->push_chain;
  j["sha256"] = StringOrNull(s.entry ? std::string_view(s.entry->sha256) : std::string_view());
  j["created"] = s.created;
  return j;
}

// `s` fit for one log line: at most 128 bytes, anything outside printable
// ASCII as \xNN (names come from the request before they are checked).
std::string Printable(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 128; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x" + proto::ToHex(s.substr(i, 1));
    }
  }
  if (s.size() > 128) out += "...";
  return out;
}

// The peer views never show peer ids: whoever knows a peer's id could
// announce as it. They show this instead: 16 hex digits of a keyed hash of
// (swarm, peer id), stable for a peer, useless to impersonate it.
std::string PeerToken(const SipKey& key, const InfoHash& ih, const PeerId& id) {
  std::uint8_t buf[40];
  std::copy(ih.begin(), ih.end(), buf);
  std::copy(id.begin(), id.end(), buf + 20);
  const std::uint64_t h = SipHash24(key, buf, sizeof buf);
  std::array<std::uint8_t, 8> be;
  for (std::size_t i = 0; i < be.size(); ++i) be[i] = static_cast<std::uint8_t>(h >> (56 - 8 * i));
  return proto::ToHex(be);
}

// "IP:PORT" or "[IPv6]:PORT" with a port in 1..65535; returns the
// normalised form, or empty when invalid.
std::string NormalisePush(std::string_view s) {
  auto e = proto::ParseEndpoint(s);
  return e ? e->ToString() : std::string();
}

}  // namespace

RegistryHandler::RegistryHandler(SwarmTable& table, RegistryStore* store, const Clock& clock,
                                 RegistryConfig config)
    : table_(table), store_(store), clock_(clock), config_(std::move(config)) {}

namespace {

constexpr std::string_view kPrefix = "/v1/swarms";

// The {name} of /v1/swarms/{name}[/...]; empty for /v1/swarms itself.
std::string_view NameInPath(std::string_view path) {
  std::string_view rest = path.substr(std::min(path.size(), kPrefix.size()));
  if (rest.empty() || rest[0] != '/') return {};
  rest.remove_prefix(1);
  return rest.substr(0, rest.find('/'));
}

std::string NotOwner(std::string_view name) {
  return "name '" + Printable(name) + "' belongs to another publisher";
}

}  // namespace

std::optional<HttpReply> RegistryHandler::CheckWriteBeforeBody(std::string_view method,
                                                               std::string_view path,
                                                               std::string_view authorization,
                                                               std::string_view client) const {
  auto refused = [&](unsigned status, const std::string& reason) {
    config_.log.Info("refused registry write " + std::string(method) + " " + Printable(path) +
                     " from " + std::string(client) + ": " + std::to_string(status) + " " + reason +
                     " (body not read)");
    return JsonError(status, reason);
  };
  auto writer = config_.access.Writer(authorization, client);
  if (!writer) return refused(401, writer.error());
  const std::string_view name = NameInPath(path);
  if (!name.empty() && !table_.MayWrite(name, *writer)) return refused(403, NotOwner(name));
  return std::nullopt;
}

std::optional<std::string> RegistryHandler::Writer(
    std::string_view method, std::string_view name, std::string_view authorization,
    std::string_view client, const std::function<void(HttpReply)>& respond) const {
  auto writer = config_.access.Writer(authorization, client);
  if (writer) return std::move(*writer);
  config_.log.Info(std::string("refused ") + (method == "PUT" ? "publish" : "unpublish") + " of '" +
                   Printable(name) + "' from " + std::string(client) + ": 401 " + writer.error());
  respond(JsonError(401, writer.error()));
  return std::nullopt;
}

void RegistryHandler::Handle(std::string_view method, std::string_view path, std::string_view query,
                             std::string body, std::string_view authorization,
                             std::string_view client, std::function<void(HttpReply)> respond) {
  std::string_view rest = path.substr(kPrefix.size());
  const bool read = method == "GET" || method == "HEAD";
  if (read && !config_.access.MayRead(authorization)) {
    return respond(JsonError(401, "token missing or wrong: this tracker is private"));
  }
  if (rest.empty() || rest == "/") {
    if (!read) return respond(JsonError(405, "method not allowed"));
    Json swarms = Json::array();
    for (const SwarmSummary& s : table_.List()) swarms.push_back(SummaryJson(s));
    Json j;
    j["swarms"] = std::move(swarms);
    return respond(JsonReply(200, j));
  }
  if (rest[0] != '/') return respond(JsonError(404, "not found"));
  rest.remove_prefix(1);
  std::size_t slash = rest.find('/');
  std::string_view key = rest.substr(0, slash);
  std::string_view sub =
      slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (method == "PUT" || method == "DELETE") {
    if (!sub.empty()) return respond(JsonError(405, "method not allowed"));
    auto owner = Writer(method, key, authorization, client, respond);
    if (!owner) return;
    if (method == "DELETE") return Unpublish(key, *owner, client, std::move(respond));
    return Publish(key, query, std::move(body), *owner, client, std::move(respond));
  }
  if (!read) return respond(JsonError(405, "method not allowed"));
  respond(Get(key, sub));
}

void RegistryHandler::Publish(std::string_view name, std::string_view query, std::string body,
                              const std::string& owner, std::string_view client,
                              std::function<void(HttpReply)> respond) {
  const proto::Logger& log = config_.log;
  auto refuse = [&](unsigned status, const std::string& reason) {
    if (log.Enabled(proto::LogLevel::kInfo)) {
      log.Info("refused publish of '" + Printable(name) + "' from " + std::string(client) + ": " +
               std::to_string(status) + " " + reason);
    }
    respond(JsonError(status, reason));
  };
  if (!proto::IsValidSwarmName(name)) {
    return refuse(400, "invalid name: use " + std::string(proto::kSwarmNameRule));
  }
  std::string push, sha256;
  bool push_ok = true, sha256_ok = true, chain_ok = true, push_chain = false;
  const bool query_ok = ForEachParam(
      query, QueryLimits{}.max_params, [&](std::string_view key, std::string_view raw) {
        if (key == "sha256") {
          auto decoded = PercentDecode(raw, 64);
          auto pin = decoded ? proto::NormaliseSha256Hex(*decoded) : std::nullopt;
          sha256_ok = pin.has_value();
          if (pin) sha256 = *pin;
          return sha256_ok;
        }
        if (key == "push_chain") {
          chain_ok = raw == "0" || raw == "1";
          push_chain = raw == "1";
          return chain_ok;
        }
        if (key != "push") return true;
        auto decoded = PercentDecode(raw, 128);
        push_ok = decoded && !(push = NormalisePush(*decoded)).empty();
        return push_ok;
      });
  if (!push_ok) return refuse(400, "invalid push endpoint: want IP:PORT");
  if (!sha256_ok) return refuse(400, "invalid sha256: want 64 hex digits");
  if (!chain_ok) return refuse(400, "invalid push_chain: want 0 or 1");
  if (push_chain && push.empty()) return refuse(400, "push_chain=1 needs a push endpoint");
  if (!query_ok) return refuse(400, "too many query parameters");
  auto meta = proto::CheckMetainfo(body, config_.limits);
  if (!meta) return refuse(400, "invalid torrent: " + meta.error());
  if (!sha256.empty() && meta->file_count != 1) {
    return refuse(400, "sha256 pins one file; this torrent holds " +
                           std::to_string(meta->file_count) + " files");
  }

  RegistryEntry entry;
  entry.name = std::string(name);
  entry.owner = owner;
  entry.size = meta->total_size;
  entry.piece_length = meta->piece_length;
  entry.pieces = meta->num_pieces;
  entry.files = meta->file_count;
  entry.push = push;
  entry.sha256 = sha256;
  entry.push_chain = push_chain;
  const std::int64_t now = clock_.Now();
  PublishOutcome r = table_.Publish(meta->info_hash, entry, now);
  switch (r.kind) {
    case PublishOutcome::kNotOwner:
      return refuse(403, NotOwner(name));
    case PublishOutcome::kHashTaken:
      return refuse(409, "info_hash already published as '" + r.other + "'");
    case PublishOutcome::kFull:
      log.Warning("swarm limit reached (--max-swarms): refused publish of '" + std::string(name) +
                  "' from " + std::string(client));
      return respond(JsonError(503, "tracker full: swarm limit reached"));
    case PublishOutcome::kCreated:
    case PublishOutcome::kUpdated:
    case PublishOutcome::kMoved:
      break;
  }
  // The stored entry keeps its first `created`; re-read it so the database
  // row matches memory exactly.
  auto stored = table_.Entry(meta->info_hash);
  const bool moved = r.kind == PublishOutcome::kMoved;
  Json j;
  j["name"] = stored ? std::string_view(stored->name) : name;
  j["info_hash"] = ToHex(meta->info_hash);
  j["size"] = meta->total_size;
  j["piece_length"] = meta->piece_length;
  j["pieces"] = meta->num_pieces;
  j["files"] = meta->file_count;
  j["push"] = StringOrNull(push);
  j["push_chain"] = push_chain;
  j["sha256"] = StringOrNull(sha256);
  j["previous"] = moved ? Json(ToHex(r.previous)) : Json();
  HttpReply reply = JsonReply(r.kind == PublishOutcome::kCreated ? 201 : 200, j);
  std::string what = std::string(name) + " " + ToHex(meta->info_hash) +
                     (r.kind == PublishOutcome::kCreated ? " (created"
                      : moved                            ? " (moved from " + ToHex(r.previous)
                                                         : std::string(" (updated")) +
                     (push.empty() ? "" : ", push " + push) + (push_chain ? " as a chain" : "") +
                     ") from " + std::string(client);
  if (!stored) return respond(std::move(reply));  // unpublished meanwhile
  RegistryWrite w;
  w.kind = r.kind == PublishOutcome::kUpdated ? RegistryWrite::Kind::kUpdate
                                              : RegistryWrite::Kind::kStore;
  w.ih = meta->info_hash;
  w.entry = *stored;
  if (w.kind == RegistryWrite::Kind::kStore) {
    w.torrent = std::make_shared<const std::string>(std::move(body));
  }
  if (moved) w.retire = r.previous;
  w.retired_at = now;
  Persist(std::move(w), std::move(reply), "published " + what, std::move(respond));
}

void RegistryHandler::Unpublish(std::string_view name, const std::string& owner,
                                std::string_view client, std::function<void(HttpReply)> respond) {
  auto refuse = [&](unsigned status, const std::string& reason) {
    config_.log.Info("refused unpublish of '" + Printable(name) + "' from " + std::string(client) +
                     ": " + std::to_string(status) + " " + reason);
    respond(JsonError(status, reason));
  };
  if (!proto::IsValidSwarmName(name)) {
    return refuse(400, "invalid name: use " + std::string(proto::kSwarmNameRule));
  }
  UnpublishOutcome r = table_.Unpublish(name, owner);
  if (r.kind == UnpublishOutcome::kUnknown) return refuse(404, "unknown name");
  if (r.kind == UnpublishOutcome::kNotOwner) return refuse(403, NotOwner(name));
  Json j;
  j["name"] = name;
  j["info_hash"] = ToHex(r.info_hash);
  j["deleted"] = true;
  RegistryWrite w;
  w.kind = RegistryWrite::Kind::kRemove;
  w.ih = r.info_hash;
  Persist(std::move(w), JsonReply(200, j),
          "unpublished " + std::string(name) + " " + ToHex(r.info_hash) + " from " +
              std::string(client),
          std::move(respond));
}

// Answers once the change is committed, so a client that got its reply
// finds the change after any restart.
void RegistryHandler::Persist(RegistryWrite write, HttpReply reply, std::string what,
                              std::function<void(HttpReply)> respond) {
  const proto::Logger& log = config_.log;
  if (!store_) {
    log.Info(what);
    return respond(std::move(reply));
  }
  store_->PersistRegistry(std::move(write), [reply = std::move(reply), respond = std::move(respond),
                                             what = std::move(what), &log](bool ok) mutable {
    if (ok) {
      log.Info(what);
      return respond(std::move(reply));
    }
    log.Error(what +
              " not durable yet: the database write failed; retried with the next "
              "batch");
    respond(JsonError(500,
                      "database write failed; the change is served from memory and "
                      "retried, but not yet durable"));
  });
}

HttpReply RegistryHandler::Get(std::string_view key, std::string_view sub) {
  auto ih = table_.Resolve(key);
  if (!ih) return JsonError(404, "unknown swarm");
  const std::int64_t now = clock_.Now();
  if (sub.empty()) {
    auto s = table_.Summary(*ih);
    if (!s) return JsonError(404, "unknown swarm");
    return JsonReply(200, SummaryJson(*s));
  }
  if (sub == "torrent") {
    if (!table_.Entry(*ih) || !store_)
      return JsonError(404, "no metainfo published for this swarm");
    // From SQLite, outside the state mutex: memory holds no torrent bytes.
    auto bytes = store_->ReadTorrent(*ih);
    if (!bytes) {
      config_.log.Error("reading the metainfo of " + ToHex(*ih) + ": " + bytes.error());
      return JsonError(500, "database read failed");
    }
    if (!*bytes) return JsonError(404, "no metainfo published for this swarm");
    return {200, "application/x-bittorrent", std::move(**bytes)};
  }
  auto peers = table_.Peers(*ih, now);
  if (!peers) return JsonError(404, "unknown swarm");
  if (sub == "peers") {
    Json list = Json::array();
    for (const PeerView& v : *peers) {
      Json p;
      p["peer"] = PeerToken(config_.peer_token_key, *ih, v.peer.id);
      p["ip"] = v.peer.addr.IpString();
      p["port"] = v.peer.addr.port;
      p["uploaded"] = v.peer.uploaded;
      p["downloaded"] = v.peer.downloaded;
      p["left"] = v.peer.left;
      p["event"] = v.peer.stopped ? "stopped" : EventName(v.peer.last_event);
      p["state"] = PeerStateName(v.state);
      p["first_seen"] = v.peer.first_seen;
      p["last_announce"] = v.peer.last_announce;
      list.push_back(std::move(p));
    }
    Json j;
    j["peers"] = std::move(list);
    return JsonReply(200, j);
  }
  if (sub == "completion") {
    std::int64_t done = 0, running = 0, stale = 0;
    std::vector<const PeerView*> unfinished;
    for (const PeerView& v : *peers) {
      if (v.state == PeerState::kDone) {
        ++done;
        continue;
      }
      (v.state == PeerState::kStale ? stale : running)++;
      unfinished.push_back(&v);
    }
    // Slowest first: most bytes left, then the longest-running.
    std::sort(unfinished.begin(), unfinished.end(), [](const PeerView* a, const PeerView* b) {
      if (a->peer.left != b->peer.left) return a->peer.left > b->peer.left;
      return a->peer.first_seen < b->peer.first_seen;
    });
    const StateOptions& o = table_.options();
    const std::int64_t every = o.progress_interval > 0 ? o.progress_interval : o.interval;
    const StragglerContext context =
        MakeStragglerContext(*peers, now, o.stale_after, std::max<std::int64_t>(30, 3 * every));
    Json stragglers = Json::array();
    for (const PeerView* v : unfinished) {
      const StragglerReason why = ExplainStraggler(*v, context);
      Json p;
      p["peer"] = PeerToken(config_.peer_token_key, *ih, v->peer.id);
      p["ip"] = v->peer.addr.IpString();
      p["port"] = v->peer.addr.port;
      p["left"] = v->peer.left;
      p["since"] = v->peer.first_seen;
      p["last_announce"] = v->peer.last_announce;
      p["why"] = why.code;
      p["reason"] = why.message;
      p["idle_seconds"] = why.idle_seconds;
      p["rate"] = v->peer.rate;  // bytes/s, -1 until two announces
      stragglers.push_back(std::move(p));
    }
    Json j;
    j["total"] = static_cast<std::int64_t>(peers->size());
    j["done"] = done;
    j["running"] = running;
    j["stale"] = stale;
    j["stragglers"] = std::move(stragglers);
    return JsonReply(200, j);
  }
  return JsonError(404, "not found");
}

}  // namespace swarmcast::tracker

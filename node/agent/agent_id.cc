#include "node/agent/agent_id.h"

#include <sys/random.h>
#include <unistd.h>

#include <array>

#include "node/file_io.h"
#include "proto/fleet_names.h"
#include "proto/hex.h"

namespace swarmcast::node {
namespace {

std::string NewId() {
  std::array<char, 256> host{};
  std::string base;
  if (gethostname(host.data(), host.size() - 1) == 0) {
    for (const char* p = host.data(); *p && base.size() < 40; ++p) {
      const char c = *p;
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
      if (c == '.') break;  // the short host name
      base += ok ? c : '-';
    }
  }
  if (base.empty() || !proto::IsValidAgentId(base)) base = "agent";
  std::array<std::uint8_t, 4> r{};
  if (getrandom(r.data(), r.size(), 0) != static_cast<ssize_t>(r.size())) {
    // Without randomness two agents on hosts of the same name could
    // collide; the pid and time still tell two starts apart.
    const auto v = static_cast<std::uint32_t>(getpid()) ^ static_cast<std::uint32_t>(time(nullptr));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  return base + "-" + proto::ToHex(r);
}

}  // namespace

Result<std::string, std::string> LoadOrCreateAgentId(const std::filesystem::path& data_dir,
                                                     const std::string& wanted) {
  const std::filesystem::path file = data_dir / "agent-id";
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    auto text = ReadFileBounded(file, 256);
    if (!text) return Unexpected(text.error());
    std::string id = text->substr(0, text->find('\n'));
    if (!proto::IsValidAgentId(id)) {
      return Unexpected(file.string() + " holds no valid agent id (" +
                        std::string(proto::kAgentIdRule) + ")");
    }
    if (!wanted.empty() && wanted != id) {
      return Unexpected("--id " + wanted + " differs from the id kept in " + file.string() + " (" +
                        id + "); remove the file to change it");
    }
    return id;
  }
  if (!wanted.empty() && !proto::IsValidAgentId(wanted)) {
    return Unexpected("--id '" + wanted + "' is not " + std::string(proto::kAgentIdRule));
  }
  const std::string id = wanted.empty() ? NewId() : wanted;
  if (auto e = WriteFileAtomically(file, id + "\n")) {
    return Unexpected("cannot write " + file.string() + ": " + e.message());
  }
  return id;
}

}  // namespace swarmcast::node

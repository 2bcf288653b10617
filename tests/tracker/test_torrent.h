// A minimal valid single-file v1 metainfo (16 KiB pieces, dummy hashes),
// for the tracker's unit and integration tests.
#pragma once

#include <cstdint>
#include <string>

#include "proto/bencode.h"

namespace swarmcast::tracker::testing {

inline std::string Torrent(const std::string& name, std::int64_t length) {
  proto::BencodeDict info;
  info["name"] = name;
  info["piece length"] = 16384;
  info["length"] = length;
  info["pieces"] = std::string(static_cast<std::size_t>((length + 16383) / 16384) * 20, 'p');
  proto::BencodeDict t;
  t["info"] = info;
  return proto::EncodeBencode(proto::BencodeValue(t));
}

}  // namespace swarmcast::tracker::testing

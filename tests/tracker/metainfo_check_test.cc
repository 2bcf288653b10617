#include "tracker/metainfo_check.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include "proto/bencode.h"

namespace swarmcast::tracker {
namespace {

using proto::BencodeDict;
using proto::BencodeList;
using proto::BencodeValue;

BencodeDict SingleFileInfo(std::int64_t length = 40000, std::int64_t plen = 16384) {
  BencodeDict info;
  info["name"] = "image.img";
  info["piece length"] = plen;
  info["length"] = length;
  info["pieces"] = std::string(static_cast<std::size_t>((length + plen - 1) / plen) * 20, 'x');
  return info;
}

std::string Torrent(BencodeDict info) {
  BencodeDict t;
  t["announce"] = "http://127.0.0.1/announce";
  t["info"] = std::move(info);
  return proto::EncodeBencode(BencodeValue(t));
}

std::string Reason(const std::string& torrent) {
  auto r = CheckMetainfo(torrent, {});
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error();
}

TEST(CheckMetainfo, SingleFileAndInfoHash) {
  BencodeDict info = SingleFileInfo();
  std::string t = Torrent(info);
  auto r = CheckMetainfo(t, {});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->size, 40000);
  EXPECT_EQ(r->pieces, 3);
  EXPECT_EQ(r->files, 1);
  EXPECT_EQ(r->name, "image.img");
  std::string raw = proto::EncodeBencode(BencodeValue(info));
  InfoHash want;
  SHA1(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), want.data());
  EXPECT_EQ(r->info_hash, want);
}

TEST(CheckMetainfo, MultiFile) {
  BencodeDict info;
  info["name"] = "dir";
  info["piece length"] = 16384;
  BencodeList files;
  files.push_back(BencodeDict{{"length", 10000}, {"path", BencodeList{"a", "b.bin"}}});
  files.push_back(BencodeDict{{"length", 30000}, {"path", BencodeList{"c.bin"}}});
  info["files"] = files;
  info["pieces"] = std::string(60, 'x');
  auto r = CheckMetainfo(Torrent(info), {});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->files, 2);
  EXPECT_EQ(r->size, 40000);
}

TEST(CheckMetainfo, RefusesBadTorrents) {
  EXPECT_NE(Reason("not bencode").find("not bencode"), std::string::npos);
  EXPECT_NE(Reason("le").find("not a dictionary"), std::string::npos);
  EXPECT_NE(Reason("d4:infoi1ee").find("no info dictionary"), std::string::npos);

  BencodeDict bad_pl = SingleFileInfo(40000, 16384);
  bad_pl["piece length"] = 20000;
  EXPECT_NE(Reason(Torrent(bad_pl)).find("power of two"), std::string::npos);
  BencodeDict small_pl = SingleFileInfo(40000, 8192);
  EXPECT_NE(Reason(Torrent(small_pl)).find("power of two"), std::string::npos);

  BencodeDict bad_pieces = SingleFileInfo();
  bad_pieces["pieces"] = std::string(59, 'x');
  EXPECT_NE(Reason(Torrent(bad_pieces)).find("multiple of 20"), std::string::npos);
  BencodeDict wrong_count = SingleFileInfo();
  wrong_count["pieces"] = std::string(40, 'x');
  EXPECT_NE(Reason(Torrent(wrong_count)).find("needs 3"), std::string::npos);

  BencodeDict no_len = SingleFileInfo();
  no_len.erase("length");
  EXPECT_NE(Reason(Torrent(no_len)).find("neither length nor files"), std::string::npos);

  BencodeDict empty = SingleFileInfo();
  empty.erase("length");
  empty["files"] = BencodeList{};
  EXPECT_NE(Reason(Torrent(empty)).find("empty file list"), std::string::npos);

  for (BencodeList path : {BencodeList{"..", "etc"}, BencodeList{"a", ""}, BencodeList{"/etc"},
                           BencodeList{"a/../../b"}, BencodeList{}}) {
    BencodeDict info = SingleFileInfo();
    info.erase("length");
    info["files"] = BencodeList{BencodeDict{{"length", 40000}, {"path", path}}};
    EXPECT_FALSE(CheckMetainfo(Torrent(info), {}).ok());
  }
  BencodeDict bad_name = SingleFileInfo();
  bad_name["name"] = "..";
  EXPECT_NE(Reason(Torrent(bad_name)).find("name"), std::string::npos);
}

TEST(CheckMetainfo, V2OnlyRefusedWithReason) {
  BencodeDict info;
  info["name"] = "x";
  info["piece length"] = 16384;
  info["meta version"] = 2;
  info["file tree"] = BencodeDict{};
  EXPECT_NE(Reason(Torrent(info)).find("v2-only"), std::string::npos);
}

TEST(CheckMetainfo, SizeLimit) {
  MetainfoLimits limits;
  limits.max_bytes = 100;
  auto r = CheckMetainfo(Torrent(SingleFileInfo()), limits);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("size limit"), std::string::npos);
}

TEST(ValidSwarmName, Rules) {
  EXPECT_TRUE(ValidSwarmName("ubuntu-24.04_amd64.img"));
  EXPECT_TRUE(ValidSwarmName("a"));
  EXPECT_TRUE(ValidSwarmName(std::string(128, 'a')));
  EXPECT_FALSE(ValidSwarmName(std::string(129, 'a')));
  EXPECT_FALSE(ValidSwarmName(""));
  EXPECT_FALSE(ValidSwarmName(".hidden"));
  EXPECT_FALSE(ValidSwarmName("-x"));
  EXPECT_FALSE(ValidSwarmName("a/b"));
  EXPECT_FALSE(ValidSwarmName("a b"));
  EXPECT_FALSE(ValidSwarmName(std::string(40, 'a')));  // looks like an info-hash
  EXPECT_FALSE(ValidSwarmName(std::string(64, 'F')));
  EXPECT_TRUE(ValidSwarmName(std::string(40, 'g')));
  EXPECT_TRUE(ValidSwarmName(std::string(41, 'a')));
}

}  // namespace
}  // namespace swarmcast::tracker

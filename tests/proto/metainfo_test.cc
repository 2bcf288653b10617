// The one metainfo check and name rules (proto/metainfo.h) that the
// tracker and the node both apply.
#include "proto/metainfo.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <string>

#include "proto/bencode.h"
#include "proto/hex.h"

namespace swarmcast::proto {
namespace {

constexpr std::int64_t kPiece = 16 << 10;

BencodeDict SingleFileInfo(std::string name, std::int64_t length) {
  const std::int64_t pieces = (length + kPiece - 1) / kPiece;
  return BencodeDict{{"name", name},
                     {"piece length", kPiece},
                     {"length", length},
                     {"pieces", std::string(static_cast<std::size_t>(pieces) * 20, 'h')}};
}

BencodeValue File(BencodeList path, std::int64_t length, std::string attr = "") {
  BencodeDict f{{"length", length}, {"path", std::move(path)}};
  if (!attr.empty()) f["attr"] = attr;
  return f;
}

BencodeDict MultiFileInfo(std::string name, BencodeList files) {
  std::int64_t total = 0;
  for (const auto& f : files) total += *f.Find("length")->if_int();
  const std::int64_t pieces = (total + kPiece - 1) / kPiece;
  return BencodeDict{{"name", name},
                     {"piece length", kPiece},
                     {"files", std::move(files)},
                     {"pieces", std::string(static_cast<std::size_t>(pieces) * 20, 'h')}};
}

std::string Torrent(BencodeDict info) {
  return EncodeBencode(
      BencodeDict{{"announce", "http://127.0.0.1:6969/announce"}, {"info", std::move(info)}});
}

TEST(CheckMetainfo, AcceptsASingleFile) {
  auto r = CheckMetainfo(Torrent(SingleFileInfo("disk.img", 100'000)));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->name, "disk.img");
  EXPECT_EQ(r->total_size, 100'000);
  EXPECT_EQ(r->num_pieces, 7);
  EXPECT_EQ(r->piece_length, kPiece);
  ASSERT_EQ(r->paths.size(), 1u);
  EXPECT_FALSE(r->hybrid);
}

TEST(CheckMetainfo, AcceptsADirectoryAndSkipsPadFiles) {
  auto r = CheckMetainfo(Torrent(MultiFileInfo(
      "set", {File({"a", "b.bin"}, 1000), File({".pad", "15384"}, 15384, "p"), File({"c"}, 5)})));
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->paths.size(), 2u);
  EXPECT_EQ(r->paths[0], "set/a/b.bin");
  EXPECT_EQ(r->paths[1], "set/c");
}

TEST(CheckMetainfo, RefusesPathTraversal) {
  for (const char* bad : {"..", ".", "", "a/b", "a\\b"}) {
    EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {File({"ok", bad}, 10)}))))
        << "element '" << bad << "'";
    EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo(bad, 10)))) << "name '" << bad << "'";
  }
  EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo("/etc/passwd", 10))));
  EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo(std::string("a\0b", 3), 10))));
  EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo(std::string(256, 'n'), 10))));
  EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {File({}, 10)}))));
}

TEST(CheckMetainfo, RefusesSymlinksAndSpecialFiles) {
  EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {File({"link"}, 0, "l")}))));
  BencodeDict f{{"length", 0}, {"path", BencodeList{"x"}}, {"symlink path", BencodeList{"etc"}}};
  EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {f}))));
  BencodeDict info = SingleFileInfo("x", 10);
  info["attr"] = "l";
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));
}

TEST(CheckMetainfo, RefusesInconsistentOrOversizedCounts) {
  BencodeDict info = SingleFileInfo("x", 100'000);
  info["pieces"] = std::string(20 * 3, 'h');  // 7 needed
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));
  info["pieces"] = std::string(20 * 7 + 1, 'h');
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));
  info = SingleFileInfo("x", -1);
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));
  info = SingleFileInfo("x", 10);
  info["piece length"] = 1;
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));

  MetainfoLimits limits;
  limits.max_files = 2;
  EXPECT_FALSE(CheckMetainfo(
      Torrent(MultiFileInfo("set", {File({"a"}, 1), File({"b"}, 1), File({"c"}, 1)})), limits));
  limits = {};
  limits.max_total_size = 1000;
  EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo("x", 1001)), limits));
  limits = {};
  limits.max_bytes = 100;
  EXPECT_FALSE(CheckMetainfo(Torrent(SingleFileInfo("x", 100'000)), limits));
}

TEST(CheckMetainfo, RefusesMalformedShapes) {
  EXPECT_FALSE(CheckMetainfo(""));
  EXPECT_FALSE(CheckMetainfo("de"));
  EXPECT_FALSE(CheckMetainfo("d4:infoi1ee"));
  EXPECT_FALSE(CheckMetainfo("garbage"));
  BencodeDict both = SingleFileInfo("x", 10);
  both["files"] = BencodeList{File({"a"}, 10)};
  EXPECT_FALSE(CheckMetainfo(Torrent(both)));
  BencodeDict v2only = SingleFileInfo("x", 10);
  v2only.erase("pieces");
  EXPECT_FALSE(CheckMetainfo(Torrent(v2only)));
}

TEST(CheckMetainfo, ChecksTheV2FileTreeOfAHybrid) {
  BencodeDict info = SingleFileInfo("x", 10);
  BencodeDict leaf{{"", BencodeDict{{"length", 10}, {"pieces root", std::string(32, 'r')}}}};
  info["file tree"] = BencodeDict{{"x", leaf}};
  info["meta version"] = 2;
  auto ok = CheckMetainfo(Torrent(info));
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_TRUE(ok->hybrid);
  info["file tree"] = BencodeDict{{"..", leaf}};
  EXPECT_FALSE(CheckMetainfo(Torrent(info)));
}

TEST(CheckMetainfo, RefusesTheStagingAreasName) {
  for (const char* name : {".swarmcast", ".SwarmCast"}) {
    auto r = CheckMetainfo(Torrent(SingleFileInfo(name, 10)));
    ASSERT_FALSE(r) << name;
    EXPECT_NE(r.error().find("reserved"), std::string::npos) << r.error();
  }
  EXPECT_TRUE(CheckMetainfo(Torrent(SingleFileInfo(".swarmcast2", 10))));
  EXPECT_TRUE(IsReservedName(".SWARMCAST"));
  EXPECT_FALSE(IsReservedName("swarmcast"));
}

TEST(SafePathElement, Rules) {
  EXPECT_TRUE(IsSafePathElement("file.bin"));
  EXPECT_TRUE(IsSafePathElement("..."));
  EXPECT_TRUE(IsSafePathElement(".hidden"));
  EXPECT_FALSE(IsSafePathElement(".."));
  EXPECT_FALSE(IsSafePathElement("x", 0));
}

BencodeDict ImageInfo(std::int64_t length = 40000, std::int64_t plen = 16384) {
  BencodeDict info;
  info["name"] = "image.img";
  info["piece length"] = plen;
  info["length"] = length;
  info["pieces"] = std::string(static_cast<std::size_t>((length + plen - 1) / plen) * 20, 'x');
  return info;
}

std::string Reason(const std::string& torrent) {
  auto r = CheckMetainfo(torrent, {});
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error();
}

TEST(CheckMetainfo, InfoHashIsTheSha1OfTheInfoBytes) {
  BencodeDict info = ImageInfo();
  std::string t = Torrent(info);
  auto r = CheckMetainfo(t, {});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->total_size, 40000);
  EXPECT_EQ(r->num_pieces, 3);
  EXPECT_EQ(r->file_count, 1);
  EXPECT_EQ(r->name, "image.img");
  std::string raw = EncodeBencode(BencodeValue(info));
  InfoHashBytes want;
  SHA1(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), want.data());
  EXPECT_EQ(r->info_hash, want);
}

TEST(CheckMetainfo, MultiFileCountsEntries) {
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
  EXPECT_EQ(r->file_count, 2);
  EXPECT_EQ(r->total_size, 40000);
}

TEST(CheckMetainfo, RefusalsSayWhy) {
  EXPECT_NE(Reason("not bencode").find("not bencode"), std::string::npos);
  EXPECT_NE(Reason("le").find("not a dictionary"), std::string::npos);
  EXPECT_NE(Reason("d4:infoi1ee").find("no info dictionary"), std::string::npos);

  BencodeDict bad_pl = ImageInfo(40000, 16384);
  bad_pl["piece length"] = 20000;
  EXPECT_NE(Reason(Torrent(bad_pl)).find("power of two"), std::string::npos);
  BencodeDict small_pl = ImageInfo(40000, 8192);
  EXPECT_NE(Reason(Torrent(small_pl)).find("power of two"), std::string::npos);

  BencodeDict bad_pieces = ImageInfo();
  bad_pieces["pieces"] = std::string(59, 'x');
  EXPECT_NE(Reason(Torrent(bad_pieces)).find("multiple of 20"), std::string::npos);
  BencodeDict wrong_count = ImageInfo();
  wrong_count["pieces"] = std::string(40, 'x');
  EXPECT_NE(Reason(Torrent(wrong_count)).find("does not match size"), std::string::npos);

  BencodeDict no_len = ImageInfo();
  no_len.erase("length");
  EXPECT_NE(Reason(Torrent(no_len)).find("exactly one of"), std::string::npos);

  BencodeDict empty = ImageInfo();
  empty.erase("length");
  empty["files"] = BencodeList{};
  EXPECT_NE(Reason(Torrent(empty)).find("non-empty list"), std::string::npos);

  for (BencodeList path : {BencodeList{"..", "etc"}, BencodeList{"a", ""}, BencodeList{"/etc"},
                           BencodeList{"a/../../b"}, BencodeList{}}) {
    BencodeDict info = ImageInfo();
    info.erase("length");
    info["files"] = BencodeList{BencodeDict{{"length", 40000}, {"path", path}}};
    EXPECT_FALSE(CheckMetainfo(Torrent(info), {}).ok());
  }
  BencodeDict bad_name = ImageInfo();
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
  auto r = CheckMetainfo(Torrent(ImageInfo()), limits);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("larger than 100 bytes"), std::string::npos);
}

// The tracker and the node used to disagree here: the tracker accepted
// these, and every `get` then refused them (exit 4).
TEST(CheckMetainfo, WhatTheTrackerAcceptsAGetAccepts) {
  BencodeDict huge = SingleFileInfo("x", 10);
  huge["piece length"] = std::int64_t{1} << 30;
  EXPECT_FALSE(CheckMetainfo(Torrent(huge)));
  huge["piece length"] = std::int64_t{64} << 20;
  EXPECT_TRUE(CheckMetainfo(Torrent(huge)));
  EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {File({"a"}, 1), File({"l"}, 0, "l")}))));
  BencodeList deep;
  for (int i = 0; i < 33; ++i) deep.push_back("d");
  EXPECT_FALSE(CheckMetainfo(Torrent(MultiFileInfo("set", {File(deep, 1)}))));
}

TEST(SwarmName, FollowsTheRegistryGrammar) {
  EXPECT_TRUE(IsValidSwarmName("ubuntu-24.04.img"));
  EXPECT_TRUE(IsValidSwarmName("a"));
  EXPECT_TRUE(IsValidSwarmName("A_b-c.d"));
  EXPECT_TRUE(IsValidSwarmName(std::string(128, 'x')));
  EXPECT_FALSE(IsValidSwarmName(std::string(129, 'x')));
  EXPECT_FALSE(IsValidSwarmName(""));
  EXPECT_FALSE(IsValidSwarmName(".hidden"));
  EXPECT_FALSE(IsValidSwarmName("-flag"));
  EXPECT_FALSE(IsValidSwarmName("a/b"));
  EXPECT_FALSE(IsValidSwarmName("a b"));
  EXPECT_FALSE(IsValidSwarmName("a%2e"));
}

TEST(SwarmName, NeverAnInfoHashSpelling) {
  const std::string h40(40, 'a'), h64(64, 'F');
  EXPECT_FALSE(IsValidSwarmName(h40));
  EXPECT_FALSE(IsValidSwarmName(h64));
  EXPECT_TRUE(IsValidSwarmName(std::string(39, 'a')));
  EXPECT_TRUE(IsValidSwarmName(std::string(39, 'a') + "g"));
  EXPECT_TRUE(IsInfoHashHex(h40));
  EXPECT_TRUE(IsInfoHashHex("97CEBE53cf04ab02712a94991fc36e079614c008"));
  EXPECT_FALSE(IsInfoHashHex(h64));
  EXPECT_FALSE(IsInfoHashHex(std::string(39, 'a') + "g"));
}

TEST(SwarmName, EdgeCasesTheTrackerPinnedDown) {
  EXPECT_TRUE(IsValidSwarmName("ubuntu-24.04_amd64.img"));
  EXPECT_FALSE(IsValidSwarmName(std::string(64, 'F')));
  EXPECT_TRUE(IsValidSwarmName(std::string(40, 'g')));
  EXPECT_TRUE(IsValidSwarmName(std::string(41, 'a')));
}

TEST(Hex, RoundTripsAndRefusesBadDigits) {
  const std::array<std::uint8_t, 3> bytes{0x00, 0xab, 0xff};
  EXPECT_EQ(ToHex(bytes), "00abff");
  std::array<std::uint8_t, 3> back{};
  EXPECT_TRUE(FromHex("00ABff", back));
  EXPECT_EQ(back, bytes);
  EXPECT_FALSE(FromHex("00abf", back));
  EXPECT_FALSE(FromHex("00abfg", back));
  EXPECT_EQ(ToHex(std::string_view("\x01\x10", 2)), "0110");
  EXPECT_TRUE(IsHexDigits("09afAF"));
  EXPECT_FALSE(IsHexDigits("x"));
}

}  // namespace
}  // namespace swarmcast::proto

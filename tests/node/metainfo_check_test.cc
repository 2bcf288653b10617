#include "node/metainfo_check.h"

#include <gtest/gtest.h>

#include <string>

#include "proto/bencode.h"

namespace swarmcast::node {
namespace {

using proto::BencodeDict;
using proto::BencodeList;
using proto::BencodeValue;

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
  return proto::EncodeBencode(
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

TEST(SafePathElement, Rules) {
  EXPECT_TRUE(IsSafePathElement("file.bin"));
  EXPECT_TRUE(IsSafePathElement("..."));
  EXPECT_TRUE(IsSafePathElement(".hidden"));
  EXPECT_FALSE(IsSafePathElement(".."));
  EXPECT_FALSE(IsSafePathElement("x", 0));
}

}  // namespace
}  // namespace swarmcast::node

#include "proto/bencode_writer.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

#include "proto/bencode.h"

namespace swarmcast::proto {
namespace {

// Writes a tree through the streaming writer; std::map gives the keys in
// canonical order.
void Write(BencodeWriter& w, const BencodeValue& v) {
  if (const auto* i = v.if_int()) {
    w.Int(*i);
  } else if (const auto* s = v.if_string()) {
    w.String(*s);
  } else if (const auto* l = v.if_list()) {
    w.BeginList();
    for (const auto& item : *l) Write(w, item);
    w.End();
  } else if (const auto* d = v.if_dict()) {
    w.BeginDict();
    for (const auto& [k, item] : *d) Write(w.Key(k), item);
    w.End();
  }
}

TEST(BencodeWriter, SameBytesAsTheTreeEncoder) {
  BencodeDict d;
  d["zeta"] = 1;
  d["alpha"] = BencodeList{"x", -3, BencodeDict{}};
  d[std::string("\xff", 1)] = "";
  d["bin"] = std::string("\0\x01\xff", 3);
  std::string out;
  BencodeWriter w(out);
  Write(w, BencodeValue(d));
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(out, EncodeBencode(BencodeValue(d)));
}

TEST(BencodeWriter, Scalars) {
  auto one = [](auto write) {
    std::string out;
    BencodeWriter w(out);
    write(w);
    EXPECT_TRUE(w.ok()) << out;
    return out;
  };
  EXPECT_EQ(one([](BencodeWriter& w) { w.Int(0); }), "i0e");
  EXPECT_EQ(one([](BencodeWriter& w) { w.Int(-42); }), "i-42e");
  EXPECT_EQ(one([](BencodeWriter& w) { w.Int(std::numeric_limits<std::int64_t>::min()); }),
            "i-9223372036854775808e");
  EXPECT_EQ(one([](BencodeWriter& w) { w.Int(std::numeric_limits<std::int64_t>::max()); }),
            "i9223372036854775807e");
  EXPECT_EQ(one([](BencodeWriter& w) { w.String(""); }), "0:");
  EXPECT_EQ(one([](BencodeWriter& w) { w.String(std::string(1000, 'a')); }),
            "1000:" + std::string(1000, 'a'));
  EXPECT_EQ(one([](BencodeWriter& w) { w.BeginList().End(); }), "le");
  EXPECT_EQ(one([](BencodeWriter& w) { w.BeginDict().End(); }), "de");
}

TEST(BencodeWriter, AppendsToWhatIsThere) {
  std::string out = "HEAD";
  BencodeWriter w(out);
  w.BeginDict().Key("a").Int(1).End();
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(out, "HEADd1:ai1ee");
}

TEST(BencodeWriter, KeysMustAscendAsUnsignedBytes) {
  auto ok = [](std::initializer_list<std::string_view> keys) {
    std::string out;
    BencodeWriter w(out);
    w.BeginDict();
    for (std::string_view k : keys) w.Key(k).Int(1);
    w.End();
    return w.ok();
  };
  EXPECT_TRUE(ok({"a", "aa", "b"}));  // a prefix sorts first
  EXPECT_TRUE(ok({"z", "\xff"}));     // 0xff after 'z'
  EXPECT_TRUE(ok({"", "a"}));
  EXPECT_FALSE(ok({"b", "a"}));
  EXPECT_FALSE(ok({"a", "a"}));
  EXPECT_FALSE(ok({"\xff", "z"}));
  EXPECT_FALSE(ok({"aa", "a"}));
}

TEST(BencodeWriter, EachDictHasItsOwnKeyOrder) {
  std::string out;
  BencodeWriter w(out);
  w.BeginDict().Key("m").BeginDict().Key("z").Int(1).End();
  w.Key("n").BeginList().BeginDict().Key("a").Int(2).End().BeginDict().Key("a").Int(3).End().End();
  w.End();
  EXPECT_TRUE(w.ok()) << out;
  EXPECT_EQ(out, "d1:md1:zi1ee1:nld1:ai2eed1:ai3eeee");
}

TEST(BencodeWriter, MisuseClearsOk) {
  auto ok = [](auto write) {
    std::string out;
    BencodeWriter w(out);
    write(w);
    return w.ok();
  };
  EXPECT_FALSE(ok([](BencodeWriter&) {}));                                   // nothing written
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.End(); }));                       // nothing open
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.Int(1).Int(2); }));               // two values
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.Key("a"); }));                    // key at top
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginList().Key("a").End(); }));  // key in a list
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginDict().Int(1).End(); }));    // value, no key
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginDict().Key("a").End(); }));  // key, no value
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginDict().Key("a").Key("b").Int(1).End(); }));
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginList(); }));              // left open
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.BeginList().End().End(); }));  // closed twice
  // Once cleared, ok() stays false even if the rest is well formed.
  EXPECT_FALSE(ok([](BencodeWriter& w) { w.End().BeginList().End(); }));
}

TEST(BencodeWriter, DepthLimit) {
  auto nest = [](std::size_t n) {
    std::string out;
    BencodeWriter w(out);
    for (std::size_t i = 0; i < n; ++i) w.BeginList();
    for (std::size_t i = 0; i < n; ++i) w.End();
    return w.ok();
  };
  EXPECT_TRUE(nest(BencodeWriter::kMaxDepth));
  EXPECT_FALSE(nest(BencodeWriter::kMaxDepth + 1));
  EXPECT_FALSE(nest(1000));  // safe, just not ok
}

BencodeValue RandomValue(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 0 ? 3 : 1);
  std::uniform_int_distribution<int> small(0, 4);
  auto bytes = [&] {
    std::string s(static_cast<std::size_t>(small(rng)), '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  switch (kind(rng)) {
    case 0:
      return BencodeValue(static_cast<std::int64_t>(rng()) - std::int64_t{0x80000000});
    case 1:
      return BencodeValue(bytes());
    case 2: {
      BencodeList l;
      for (int i = small(rng); i > 0; --i) l.push_back(RandomValue(rng, depth - 1));
      return BencodeValue(std::move(l));
    }
    default: {
      BencodeDict d;
      for (int i = small(rng); i > 0; --i) d[bytes()] = RandomValue(rng, depth - 1);
      return BencodeValue(std::move(d));
    }
  }
}

TEST(BencodeWriter, AgreesWithTheTreeEncoderOnRandomValues) {
  std::mt19937 rng(13);
  for (int n = 0; n < 2000; ++n) {
    BencodeValue v = RandomValue(rng, 4);
    std::string out;
    BencodeWriter w(out);
    Write(w, v);
    ASSERT_TRUE(w.ok()) << out;
    ASSERT_EQ(out, EncodeBencode(v));
    auto back = DecodeBencode(out);  // strict: canonical form
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    ASSERT_EQ(*back, v);
  }
}

}  // namespace
}  // namespace swarmcast::proto

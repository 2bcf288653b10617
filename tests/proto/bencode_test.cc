#include "proto/bencode.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace swarmcast::proto {
namespace {

BencodeError DecodeError(std::string_view in, const BencodeLimits& limits = {}) {
  auto r = DecodeBencode(in, limits);
  EXPECT_FALSE(r.ok()) << "decoded: " << in;
  return r.ok() ? BencodeError{} : r.error();
}

void ExpectError(std::string_view in, BencodeErrc code, std::size_t offset,
                 const BencodeLimits& limits = {}) {
  BencodeError e = DecodeError(in, limits);
  EXPECT_EQ(e.code, make_error_code(code)) << in << ": " << e.ToString();
  EXPECT_EQ(e.offset, offset) << in << ": " << e.ToString();
}

TEST(BencodeDecode, Integers) {
  EXPECT_EQ(*DecodeBencode("i0e"), BencodeValue(0));
  EXPECT_EQ(*DecodeBencode("i42e"), BencodeValue(42));
  EXPECT_EQ(*DecodeBencode("i-42e"), BencodeValue(-42));
  EXPECT_EQ(*DecodeBencode("i9223372036854775807e"),
            BencodeValue(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(*DecodeBencode("i-9223372036854775808e"),
            BencodeValue(std::numeric_limits<std::int64_t>::min()));
}

TEST(BencodeDecode, IntegerErrors) {
  ExpectError("i03e", BencodeErrc::kLeadingZero, 1);
  ExpectError("i-03e", BencodeErrc::kLeadingZero, 2);
  ExpectError("i-0e", BencodeErrc::kNegativeZero, 1);
  ExpectError("ie", BencodeErrc::kInvalidCharacter, 1);
  ExpectError("i-e", BencodeErrc::kInvalidCharacter, 2);
  ExpectError("i1x", BencodeErrc::kInvalidCharacter, 2);
  ExpectError("i+1e", BencodeErrc::kInvalidCharacter, 1);
  ExpectError("i12", BencodeErrc::kUnexpectedEnd, 3);
  ExpectError("i", BencodeErrc::kUnexpectedEnd, 1);
  ExpectError("i9223372036854775808e", BencodeErrc::kIntegerOverflow, 1);
  ExpectError("i-9223372036854775809e", BencodeErrc::kIntegerOverflow, 1);
  ExpectError("i99999999999999999999999e", BencodeErrc::kIntegerOverflow, 1);
}

TEST(BencodeDecode, Strings) {
  EXPECT_EQ(*DecodeBencode("0:"), BencodeValue(""));
  EXPECT_EQ(*DecodeBencode("4:spam"), BencodeValue("spam"));
  std::string binary("3:\0\xff\x01", 5);
  EXPECT_EQ(*DecodeBencode(binary), BencodeValue(std::string("\0\xff\x01", 3)));
}

TEST(BencodeDecode, StringErrors) {
  ExpectError("04:spam", BencodeErrc::kLeadingZero, 0);
  ExpectError("5:spam", BencodeErrc::kUnexpectedEnd, 6);
  ExpectError("4spam", BencodeErrc::kInvalidCharacter, 1);
  ExpectError("4", BencodeErrc::kUnexpectedEnd, 1);
  ExpectError("-1:a", BencodeErrc::kInvalidCharacter, 0);
  ExpectError("99999999999999999999:a", BencodeErrc::kStringTooLong, 0);
}

TEST(BencodeDecode, StringLengthLimitBoundaries) {
  BencodeLimits limits;
  limits.max_string_length = 4;
  EXPECT_TRUE(DecodeBencode("4:spam", limits).ok());
  ExpectError("5:spams", BencodeErrc::kStringTooLong, 0, limits);
  limits.max_string_length = 0;
  EXPECT_TRUE(DecodeBencode("0:", limits).ok());
  ExpectError("1:a", BencodeErrc::kStringTooLong, 0, limits);
}

TEST(BencodeDecode, ListsAndDicts) {
  auto v = DecodeBencode("l4:spami7ee");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, BencodeValue(BencodeList{"spam", 7}));
  auto d = DecodeBencode("d3:cow3:moo4:spaml1:a1:bee");
  ASSERT_TRUE(d.ok());
  ASSERT_NE(d->Find("cow"), nullptr);
  EXPECT_EQ(*d->Find("cow"), BencodeValue("moo"));
  EXPECT_EQ(*d->Find("spam"), BencodeValue(BencodeList{"a", "b"}));
  EXPECT_EQ(d->Find("absent"), nullptr);
  EXPECT_EQ(*DecodeBencode("le"), BencodeValue(BencodeList{}));
  EXPECT_EQ(*DecodeBencode("de"), BencodeValue(BencodeDict{}));
}

TEST(BencodeDecode, StructureErrors) {
  ExpectError("", BencodeErrc::kUnexpectedEnd, 0);
  ExpectError("l", BencodeErrc::kUnexpectedEnd, 1);
  ExpectError("li1e", BencodeErrc::kUnexpectedEnd, 4);
  ExpectError("d3:cow", BencodeErrc::kUnexpectedEnd, 6);
  ExpectError("d3:cowe", BencodeErrc::kInvalidCharacter, 6);
  ExpectError("di1ei2ee", BencodeErrc::kInvalidCharacter, 1);
  ExpectError("x", BencodeErrc::kInvalidCharacter, 0);
  ExpectError("e", BencodeErrc::kInvalidCharacter, 0);
  ExpectError("i1ei2e", BencodeErrc::kTrailingBytes, 3);
  ExpectError("4:spamX", BencodeErrc::kTrailingBytes, 6);
}

TEST(BencodeDecode, KeyOrder) {
  ExpectError("d1:bi1e1:ai2ee", BencodeErrc::kUnsortedKeys, 7);
  ExpectError("d1:ai1e1:ai2ee", BencodeErrc::kDuplicateKey, 7);
  BencodeLimits lenient;
  lenient.strict = false;
  auto v = DecodeBencode("d1:bi1e1:ai2ee", lenient);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->Find("a"), BencodeValue(2));
  ExpectError("d1:ai1e1:ai2ee", BencodeErrc::kDuplicateKey, 7, lenient);
  ExpectError("d1:ai1e1:ci2e1:ai3ee", BencodeErrc::kDuplicateKey, 13, lenient);
  // Keys order as unsigned bytes: 0xff sorts after 'z'.
  EXPECT_TRUE(DecodeBencode("d1:zi1e1:\xffi2ee").ok());
  ExpectError("d1:\xffi2e1:zi1ee", BencodeErrc::kUnsortedKeys, 7);
  // A prefix sorts before the longer key.
  EXPECT_TRUE(DecodeBencode("d1:ai1e2:aai2ee").ok());
}

TEST(BencodeDecode, DepthLimitBoundaries) {
  BencodeLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(DecodeBencode("llleee", limits).ok());
  ExpectError("lllleeee", BencodeErrc::kTooDeep, 3, limits);
  limits.max_depth = 0;
  EXPECT_TRUE(DecodeBencode("i1e", limits).ok());
  ExpectError("le", BencodeErrc::kTooDeep, 0, limits);
  // A huge limit is capped, so deep input fails cleanly instead of
  // exhausting the stack.
  limits.max_depth = std::numeric_limits<std::size_t>::max();
  std::string deep(100000, 'l');
  EXPECT_EQ(DecodeError(deep, limits).code, make_error_code(BencodeErrc::kTooDeep));
}

TEST(BencodeDecode, ItemLimitBoundaries) {
  BencodeLimits limits;
  limits.max_items = 3;  // the list itself and two members
  EXPECT_TRUE(DecodeBencode("li1ei2ee", limits).ok());
  ExpectError("li1ei2ei3ee", BencodeErrc::kTooManyItems, 7, limits);
  limits.max_items = 3;  // dict + key + value
  EXPECT_TRUE(DecodeBencode("d1:ai1ee", limits).ok());
  ExpectError("d1:ai1e1:bi2ee", BencodeErrc::kTooManyItems, 7, limits);
  limits.max_items = 0;
  ExpectError("i1e", BencodeErrc::kTooManyItems, 0, limits);
}

TEST(BencodeDecode, TotalSizeLimitBoundaries) {
  BencodeLimits limits;
  limits.max_total_size = 6;
  EXPECT_TRUE(DecodeBencode("4:spam", limits).ok());
  ExpectError("5:spams", BencodeErrc::kInputTooLarge, 0, limits);
}

TEST(BencodeError, MessageNamesProblemAndOffset) {
  BencodeError e = DecodeError("i03e");
  EXPECT_EQ(e.ToString(), "bencode: leading zero in a number at byte 1");
  EXPECT_STREQ(e.code.category().name(), "bencode");
}

TEST(BencodeEncode, CanonicalForm) {
  BencodeDict d;
  d["zeta"] = 1;
  d["alpha"] = BencodeList{"x", -3, BencodeDict{}};
  d[std::string("\xff", 1)] = "";
  EXPECT_EQ(EncodeBencode(BencodeValue(d)),
            "d5:alphal1:xi-3edee4:zetai1e1:\xff"
            "0:e");
  EXPECT_EQ(EncodeBencode(BencodeValue(std::numeric_limits<std::int64_t>::min())),
            "i-9223372036854775808e");
  EXPECT_EQ(EncodeBencode(BencodeValue(0)), "i0e");
}

TEST(BencodeRoundTrip, DecodeEncodeGivesSameBytes) {
  const std::string docs[] = {
      "i0e",
      "i-1e",
      "0:",
      "le",
      "de",
      "d1:ad1:bl1:ci1eeee",
      "d8:announce18:http://tracker/ann4:infod6:lengthi1048576e4:name5:a.img"
      "12:piece lengthi262144e6:pieces0:ee",
  };
  for (const auto& doc : docs) {
    auto v = DecodeBencode(doc);
    ASSERT_TRUE(v.ok()) << doc << ": " << v.error().ToString();
    EXPECT_EQ(EncodeBencode(*v), doc);
  }
}

TEST(BencodeRaw, FindsInfoBytesAsReceived) {
  const std::string info = "d6:lengthi5e4:name1:xe";
  const std::string torrent = "d8:announce3:url4:info" + info + "e";
  auto raw = FindRawDictValue(torrent, "info");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, info);
  // Re-encoding the decoded info dict reproduces the same bytes, so the
  // info-hash taken either way agrees.
  auto whole = DecodeBencode(torrent);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(EncodeBencode(*whole->Find("info")), *raw);
}

TEST(BencodeRaw, NestedKeyOfSameNameIsNotTopLevel) {
  auto raw = FindRawDictValue("d1:ad4:infoi1ee4:infoi2ee", "info");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, "i2e");
}

TEST(BencodeRaw, AbsentKeyAndErrors) {
  auto raw = FindRawDictValue("d1:ai1ee", "info");
  ASSERT_TRUE(raw.ok());
  EXPECT_TRUE(raw->empty());
  EXPECT_FALSE(FindRawDictValue("li1ee", "info").ok());
  EXPECT_FALSE(FindRawDictValue("d4:infoi1ee junk", "info").ok());
  EXPECT_FALSE(FindRawDictValue("d4:infoi01ee", "info").ok());
  EXPECT_FALSE(FindRawDictValue("", "info").ok());
}

}  // namespace
}  // namespace swarmcast::proto

#include "tracker/json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tracker/http_reply.h"

namespace swarmcast::tracker {
namespace {

TEST(JsonText, CompactAndKeysInTheOrderSet) {
  Json j;
  j["z"] = 1;
  j["a"] = Json::array({"x", nullptr, true});
  j["c"] = Json::object();
  j["n"] = std::int64_t{-9007199254740993};
  EXPECT_EQ(JsonText(j), R"({"z":1,"a":["x",null,true],"c":{},"n":-9007199254740993})");
}

TEST(JsonText, EscapesAndReplacesInvalidUtf8) {
  // UTF-8 stays as is; a stray byte and each byte of an encoded surrogate
  // become U+FFFD.
  Json j = std::string("q\"\\\n\x01 \xc3\xa9 \xff \xed\xa0\x80");
  EXPECT_EQ(JsonText(j),
            "\"q\\\"\\\\\\n\\u0001 \xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  // Never throws, and what it writes parses back.
  Json back = Json::parse(JsonText(Json(std::string("\xf0\x9f\x98\xe2\x82", 5))), nullptr, false);
  ASSERT_TRUE(back.is_string());
  EXPECT_EQ(back.get<std::string>(), "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(JsonError, OneErrorField) {
  HttpReply r = JsonError(404, "unknown swarm");
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, R"({"error":"unknown swarm"})");
}

}  // namespace
}  // namespace swarmcast::tracker

#include "tracker/json_writer.h"

#include <gtest/gtest.h>

namespace swarmcast::tracker {
namespace {

TEST(JsonWriter, NestingAndCommas) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("b").BeginArray().String("x").Null().Bool(true).EndArray();
  w.Key("c").BeginObject().EndObject().EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",null,true],"c":{}})");
}

TEST(JsonWriter, EscapesAndInvalidUtf8) {
  JsonWriter w;
  w.String(std::string("q\"\\\n\x01 \xc3\xa9 \xff \xed\xa0\x80"));
  EXPECT_EQ(w.str(),
            "\"q\\\"\\\\\\n\\u0001 \xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace swarmcast::tracker

#include "Json.h"

#include <gtest/gtest.h>

#include <string>

namespace fp8rt::json {
namespace {

Value parseOk(const std::string &text) {
  Value value;
  ParseError error;
  EXPECT_TRUE(parse(text, value, error))
      << text << " -> " << error.location.line << ":" << error.location.column
      << ": " << error.message;
  return value;
}

TEST(JsonTest, ParsesNestedValuesWithLocations) {
  Value v = parseOk("{\n  \"a\": [1, true, null, \"x\"],\n  \"b\": {}\n}");
  ASSERT_TRUE(v.is(Kind::Object));
  ASSERT_EQ(v.object.size(), 2u);
  EXPECT_EQ(v.object[0].first, "a"); // source order is kept
  const Value *a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->is(Kind::Array));
  ASSERT_EQ(a->array.size(), 4u);
  EXPECT_EQ(a->location.line, 2);
  EXPECT_EQ(a->location.column, 8);
  EXPECT_EQ(a->array[0].integer, 1);
  EXPECT_TRUE(a->array[1].boolean);
  EXPECT_TRUE(a->array[2].is(Kind::Null));
  EXPECT_EQ(a->array[3].string, "x");
  EXPECT_EQ(a->array[3].location.column, 24);
  EXPECT_TRUE(v.find("b")->is(Kind::Object));
  EXPECT_EQ(v.find("c"), nullptr);
}

TEST(JsonTest, KeepsIntegersExact) {
  Value v = parseOk("[9007199254740993, -9223372036854775808, 0, -0, 1.0, "
                    "1e3, 9223372036854775808, 2.5e-3]");
  EXPECT_TRUE(v.array[0].isInteger);
  EXPECT_EQ(v.array[0].integer,
            9007199254740993); // not representable as double
  EXPECT_EQ(v.array[1].integer, INT64_MIN);
  EXPECT_TRUE(v.array[2].isInteger);
  EXPECT_TRUE(v.array[3].isInteger);
  EXPECT_FALSE(v.array[4].isInteger); // a fraction, even if .0
  EXPECT_DOUBLE_EQ(v.array[4].number, 1.0);
  EXPECT_FALSE(v.array[5].isInteger);
  EXPECT_DOUBLE_EQ(v.array[5].number, 1000.0);
  EXPECT_FALSE(v.array[6].isInteger); // beyond int64
  EXPECT_DOUBLE_EQ(v.array[7].number, 0.0025);
}

TEST(JsonTest, DecodesEscapesAndUtf8) {
  Value v =
      parseOk(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00", "é€😀"])");
  EXPECT_EQ(v.array[0].string, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(v.array[1].string, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(v.array[2].string, v.array[1].string);
}

TEST(JsonTest, AcceptsSurroundingWhitespace) {
  Value v = parseOk(" \t\r\n 42 \n");
  EXPECT_EQ(v.integer, 42);
}

struct BadJson {
  const char *text;
  int line, column;
  const char *message;
};

class JsonErrorTest : public ::testing::TestWithParam<BadJson> {};

TEST_P(JsonErrorTest, ReportsLineColumnAndReason) {
  const BadJson &bad = GetParam();
  Value value;
  ParseError error;
  ASSERT_FALSE(parse(bad.text, value, error)) << bad.text;
  EXPECT_EQ(error.location.line, bad.line) << bad.text;
  EXPECT_EQ(error.location.column, bad.column) << bad.text;
  EXPECT_NE(error.message.find(bad.message), std::string::npos)
      << "\"" << error.message << "\" lacks \"" << bad.message << "\"";
}

const BadJson kBadJson[] = {
    {"", 1, 1, "unexpected end of input, expected a value"},
    {"[1, 2,]", 1, 7, "unexpected ']' where a value was expected"},
    {"{\"a\": 1,}", 1, 9, "where an object key (a string) was expected"},
    {"{\n  \"a\": 1 // note\n}", 2, 10, "unexpected '/'"},
    {"[01]", 1, 3, "leading zeros are not allowed"},
    {"[1.]", 1, 4, "expected a digit after '.'"},
    {"[1e]", 1, 4, "expected a digit in the exponent"},
    {"[-]", 1, 3, "invalid number: expected a digit"},
    {"['a']", 1, 2, "unexpected ''' where a value was expected"},
    {"[NaN]", 1, 2, "unexpected 'N'"},
    {"[tru]", 1, 2, "invalid literal, expected 'true'"},
    {"\"abc", 1, 5, "unterminated string"},
    {"\"a\tb\"", 1, 3, "control character byte 0x09 in string"},
    {"\"\\x\"", 1, 2, "invalid escape: backslash followed by 'x'"},
    {"\"\\u12G4\"", 1, 6, "expected 4 hex digits"},
    {"\"\\udc00\"", 1, 8, "unpaired low surrogate"},
    {"\"\\ud800x\"", 1, 8, "high surrogate not followed by a low surrogate"},
    {"\"\xC0\x80\"", 1, 2, "invalid UTF-8"},
    {"\"\xE2\x82\"", 1, 2, "invalid UTF-8 in string (bad continuation byte)"},
    {"\"\xED\xA0\x80\"", 1, 2, "surrogate"},
    {"{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\""},
    {"{\"a\" 1}", 1, 6, "where ':' was expected"},
    {"[1 2]", 1, 4, "where ',' or ']' was expected"},
    {"{} {}", 1, 4, "after the top-level value"},
    {"[1e999]", 1, 2, "number out of range"},
    {"\xEF\xBB\xBF{}", 1, 1, "unexpected byte 0xef"},
};

INSTANTIATE_TEST_SUITE_P(Strict, JsonErrorTest, ::testing::ValuesIn(kBadJson));

TEST(JsonTest, LimitsNestingDepth) {
  std::string deep(101, '[');
  deep += std::string(101, ']');
  Value value;
  ParseError error;
  ASSERT_FALSE(parse(deep, value, error));
  EXPECT_NE(error.message.find("nesting deeper than 100"), std::string::npos);
  std::string ok(100, '[');
  ok += std::string(100, ']');
  EXPECT_TRUE(parse(ok, value, error)) << error.message;
}

} // namespace
} // namespace fp8rt::json

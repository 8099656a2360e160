// The generic reader (SchemaReader.h) with a format of its own,
// SchemaTest.schema.json, generated as the kernel metadata is: every kind of
// field, and each error naming the field's JSON path and its line:column.
#include "SchemaReader.h"

#include "fp8schema/SchemaTest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace fp8rt::schema {
namespace {

#include "SchemaTestParser.inc"

using fp8schema::Expr;

const char *const kSample = R"json({
  "format": "fp8-schema-test", "version": 3,
  "name": "sample", "count": 3, "ratio": 0.5, "dtype": "bf16",
  "bytes": "roundup(M, 128)*2 + 16",
  "items": [{"label": "a", "dims": [1, 2]}, {"label": "b", "dims": [3, 4]}],
  "symbols": {"M": "M", "P": "roundup(M, 4)"},
  "step": {"kind": "launch", "kernel": "k", "args": {"x": "buffer0"}}
})json";

Status read(const std::string &text, fp8schema::Sample &out) {
  json::Value root;
  json::ParseError error;
  EXPECT_TRUE(json::parse(text, root, error)) << error.message;
  SchemaReader reader("t.json");
  return parseSampleDocument(reader, root, out);
}

TEST(SchemaReaderTest, ReadsEveryKindOfField) {
  fp8schema::Sample s;
  Status status = read(kSample, s);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(s.name, "sample");
  EXPECT_EQ(s.count, 3);
  EXPECT_FALSE(s.flag.has_value());
  EXPECT_FALSE(s.flagOrDefault());
  EXPECT_EQ(s.ratio, 0.5);
  EXPECT_EQ(s.dtype, fp8schema::DType::BF16);
  ASSERT_TRUE(s.bytes.has_value());
  EXPECT_EQ(s.bytes->str(), "roundup(M, 128)*2 + 16");
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].label, "b");
  EXPECT_EQ(s.items[1].dims, (std::vector<int64_t>{3, 4}));
  ASSERT_TRUE(s.symbols.has_value());
  EXPECT_EQ(s.symbols->at("P"),
            Expr::roundUp(Expr::symbol("M"), Expr::constant(4)));
  EXPECT_EQ(s.step.kind, fp8schema::SampleStepKind::Launch);
  EXPECT_EQ(s.step.kernel, "k");
  EXPECT_EQ(s.step.args->at("x"), "buffer0");
  EXPECT_EQ(s.modeOrDefault(), fp8schema::Mode::Fast);
}

// One mistake: `from` replaced by `to`; the error is at the '@' in `to`.
struct BadSample {
  const char *from;
  const char *to;
  const char *message; // after "t.json:LINE:COL: "
};

class SchemaReaderErrorTest : public ::testing::TestWithParam<BadSample> {};

TEST_P(SchemaReaderErrorTest, NamesThePathAndTheLocation) {
  const BadSample &bad = GetParam();
  std::string text = kSample;
  size_t at = text.find(bad.from);
  ASSERT_NE(at, std::string::npos) << "test bug: " << bad.from;
  text.replace(at, std::string(bad.from).size(), bad.to);
  size_t marker = text.find('@');
  ASSERT_NE(marker, std::string::npos) << "test bug: no '@' in " << bad.to;
  int line = 1 + static_cast<int>(
                     std::count(text.begin(), text.begin() + marker, '\n'));
  int column = static_cast<int>(marker - text.rfind('\n', marker));
  text.erase(marker, 1);
  fp8schema::Sample s;
  Status status = read(text, s);
  ASSERT_FALSE(status.ok()) << bad.to;
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(status.message(), "t.json:" + std::to_string(line) + ":" +
                                  std::to_string(column) + ": " + bad.message);
}

const BadSample kBadSamples[] = {
    // The format and version come first.
    {"\"version\": 3", "\"version\": @2",
     "version: unsupported version 2 (this runtime reads version 3)"},
    // Unknown keys, at the top and nested, listing the allowed ones.
    {"\"ratio\": 0.5", "\"ration\": @0.5",
     "(top level): unknown key \"ration\" (allowed: format, version, name, "
     "count, flag, ratio, dtype, bytes, items, symbols, step, mode)"},
    {"{\"label\": \"b\"", "{\"lable\": @\"b\"",
     "items[1]: unknown key \"lable\" (allowed: label, dims)"},
    // Wrong types.
    {"\"count\": 3", "\"count\": @\"3\"",
     "count: expected an integer, got string"},
    {"\"ratio\": 0.5", "\"ratio\": @true",
     "ratio: expected number, got boolean"},
    {"\"label\": \"a\"", "\"label\": @[]",
     "items[0].label: expected string, got array"},
    {"\"symbols\": {\"M\": \"M\", \"P\": \"roundup(M, 4)\"}",
     "\"symbols\": @[\"M\"]", "symbols: expected object, got array"},
    // Enums.
    {"\"dtype\": \"bf16\"", "\"dtype\": @\"bf61\"",
     "dtype: unknown value \"bf61\" (expected one of: e4m3, e5m2, ue8m0, "
     "bf16, f16, f32, i32)"},
    {"\"kind\": \"launch\"", "\"kind\": @\"lunch\"",
     "step.kind: unknown value \"lunch\" (expected one of: launch, fill)"},
    // Bounds and lengths.
    {"\"count\": 3", "\"count\": @11",
     "count: value 11 is out of range [1, 10]"},
    {"\"dims\": [3, 4]", "\"dims\": [3, @400]",
     "items[1].dims[1]: value 400 is out of range [1, 100]"},
    {"\"dims\": [1, 2]", "\"dims\": @[1]",
     "items[0].dims: expected 2 entries, got 1"},
    {"\"items\": [", "\"items\": @[{\"label\": \"c\", \"dims\": [5, 6]}, ",
     "items: expected at most 2 entries, got 3"},
    {"\"name\": \"sample\"", "\"name\": @\"\"", "name: must not be empty"},
    // Missing required fields, at the object that lacks them.
    {"{\"label\": \"a\", \"dims\": [1, 2]}", "@{\"label\": \"a\"}",
     "items[0]: missing required field \"dims\""},
    {"{\n  \"format\": \"fp8-schema-test\", \"version\": 3,\n  \"name\": "
     "\"sample\", ",
     "@{\n  \"format\": \"fp8-schema-test\", \"version\": 3,\n  ",
     "(top level): missing required field \"name\""},
    // A union: the variant's own keys.
    {"\"kernel\": \"k\"", "\"buffer\": @\"k\"",
     "step: unknown key \"buffer\" (allowed: kind, kernel, args)"},
    {"{\"kind\": \"launch\", \"kernel\": \"k\", \"args\": {\"x\": "
     "\"buffer0\"}}",
     "@{\"kind\": \"fill\", \"buffer\": \"b\"}",
     "step: missing required field \"value\""},
    // Map entries and expressions.
    {"\"P\": \"roundup(M, 4)\"", "\"P\": @\"roundup(M, 1)\"",
     "symbols.P: \"roundup(M, 1)\" is not an extent (expected an integer, a "
     "symbol, \"roundup(SYM, INT)\" or \"ceildiv(SYM, INT)\" with INT in [2, "
     "2^20])"},
    {"\"M\": \"M\"", "\"M\": @\"2M\"",
     "symbols.M: \"2M\" is not a symbol (symbols are identifiers such as "
     "\"M\")"},
    {"\"bytes\": \"roundup(M, 128)*2 + 16\"", "\"bytes\": @\"M +\"",
     "bytes: \"M +\" is not an expression (unexpected end at offset 3)"},
    {"\"bytes\": \"roundup(M, 128)*2 + 16\"", "\"bytes\": @-1",
     "bytes: value -1 is out of range [0, 9223372036854775807]"},
};

INSTANTIATE_TEST_SUITE_P(Validation, SchemaReaderErrorTest,
                         ::testing::ValuesIn(kBadSamples));

} // namespace
} // namespace fp8rt::schema

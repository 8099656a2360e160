// fp8schema::Expr, the expression type of the metadata formats: parsing,
// printing, evaluating, and the forms a field takes.
#include "fp8schema/Expr.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using fp8schema::Expr;

Expr parse(const std::string &text) {
  Expr e;
  std::string error;
  EXPECT_TRUE(Expr::parse(text, e, error)) << text << ": " << error;
  return e;
}

TEST(ExprTest, PrintsWhatItParses) {
  for (const char *text :
       {"M", "128", "M*16", "16*M", "roundup(M, 4)", "ceildiv(R, 128)",
        "M + N*2", "(M + N)*2", "M*(N*2)", "ceildiv(M + 127, 128)*512 + 16",
        "roundup(ceildiv(K, 32), 4)"})
    EXPECT_EQ(parse(text).str(), text);
  // Spaces and redundant parentheses go.
  EXPECT_EQ(parse(" 2 * M ").str(), "2*M");
  EXPECT_EQ(parse("roundup( M ,4 )").str(), "roundup(M, 4)");
  EXPECT_EQ(parse("(M*N)*2").str(), "M*N*2");
  // '*' binds tighter than '+'.
  EXPECT_EQ(parse("M + N*2"),
            Expr::add(Expr::symbol("M"),
                      Expr::mul(Expr::symbol("N"), Expr::constant(2))));
}

TEST(ExprTest, RejectsWhatIsNotAnExpression) {
  for (const char *text : {"", "M +", "2M", "M N", "roundup(M)", "(M", "M - 1",
                           "012", "99999999999999999999", "ceildiv(M, 2"}) {
    Expr e;
    std::string error;
    EXPECT_FALSE(Expr::parse(text, e, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(ExprTest, Evaluates) {
  std::map<std::string, int64_t> values = {{"M", 1000}, {"N", 3}};
  auto lookup = [&](const std::string &symbol, int64_t &out) {
    auto it = values.find(symbol);
    if (it == values.end())
      return false;
    out = it->second;
    return true;
  };
  auto eval = [&](const std::string &text, int64_t &out, std::string &error) {
    return parse(text).evaluate(lookup, out, error);
  };
  int64_t v = 0;
  std::string error;
  ASSERT_TRUE(eval("ceildiv(M, 128)*512 + N", v, error)) << error;
  EXPECT_EQ(v, 8 * 512 + 3);
  ASSERT_TRUE(eval("roundup(M, 64)", v, error)) << error;
  EXPECT_EQ(v, 1024);
  EXPECT_FALSE(eval("K*2", v, error));
  EXPECT_EQ(error, "symbol K is not bound");
  EXPECT_FALSE(eval("M*4611686018427387904", v, error));
  EXPECT_EQ(error, "M*4611686018427387904 overflows int64");
  EXPECT_FALSE(eval("ceildiv(M, 0)", v, error));
  EXPECT_NE(error.find("divisor >= 1"), std::string::npos) << error;
}

TEST(ExprTest, NamesItsSymbolsOnce) {
  EXPECT_EQ(parse("roundup(M, N)*M + K").symbols(),
            (std::vector<std::string>{"M", "N", "K"}));
  EXPECT_TRUE(parse("16*4").symbols().empty());
}

TEST(ExprTest, MatchesTheFormsOfAField) {
  fp8schema::ExprForm stride = {
      "Stride",  "a stride",         "...", 16, 1 << 20, 16,
      "aligned", {"SYM", "SYM*INT"}, 1,     64};
  Expr e;
  EXPECT_EQ(fp8schema::parseExprString("M", stride, e), "");
  EXPECT_EQ(fp8schema::parseExprString("M*64", stride, e), "");
  EXPECT_EQ(fp8schema::parseExprString("M*65", stride, e),
            "\"M*65\" is not a stride (expected ...)");
  EXPECT_EQ(fp8schema::parseExprString("64*M", stride, e),
            "\"64*M\" is not a stride (expected ...)");
  EXPECT_EQ(fp8schema::parseExprString("M2x", stride, e), "");
  EXPECT_EQ(fp8schema::parseExprString("2x", stride, e),
            "\"2x\" is not a symbol (symbols are identifiers such as \"M\")");
  EXPECT_EQ(fp8schema::checkExprConstant(48, stride), "");
  EXPECT_EQ(fp8schema::checkExprConstant(40, stride),
            "value 40 is not a multiple of 16 (aligned)");
  EXPECT_EQ(fp8schema::checkExprConstant(0, stride),
            "value 0 is out of range [16, 1048576]");
  EXPECT_EQ(fp8schema::describeExprForm(stride),
            "an integer or a string \"SYM\" or \"SYM*INT\"");
}

} // namespace

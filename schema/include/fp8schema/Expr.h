//===- Expr.h - Integer expressions of run-time symbols ---------*- C++ -*-===//
//
// The expression type of the metadata formats (schema/*.schema.json): an
// extent, a stride or a size in terms of run-time symbols, such as `M`,
// `roundup(M, 4)`, `ceildiv(R, 128)` or `M*2048`. In JSON a constant is an
// integer and any other expression a string. Plain C++17: the compiler and
// the host runtime share it.
//
// Grammar (spaces allowed between tokens):
//   expr    := product ('+' product)*
//   product := atom ('*' atom)*
//   atom    := INT | SYMBOL | ('ceildiv' | 'roundup') '(' expr ',' expr ')'
//            | '(' expr ')'
// INT is a decimal integer without leading zeros below 2^63, SYMBOL an
// identifier ([A-Za-z_][A-Za-z0-9_]*). ceildiv(a, b) is a / b rounded up,
// roundup(a, b) a rounded up to a multiple of b.
//
//===----------------------------------------------------------------------===//

#ifndef FP8SCHEMA_EXPR_H
#define FP8SCHEMA_EXPR_H

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8schema {

class Expr {
public:
  enum class Kind { Constant, Symbol, Add, Mul, CeilDiv, RoundUp };

  /// The constant 0.
  Expr() = default;
  static Expr constant(int64_t value);
  static Expr symbol(std::string name);
  static Expr add(Expr lhs, Expr rhs);
  static Expr mul(Expr lhs, Expr rhs);
  static Expr ceilDiv(Expr lhs, Expr rhs);
  static Expr roundUp(Expr lhs, Expr rhs);

  /// Parses `text`; on failure returns false and says why in `error`.
  static bool parse(std::string_view text, Expr &out, std::string &error);

  Kind kind() const { return kind_; }
  bool isConstant() const { return kind_ == Kind::Constant; }
  bool isSymbol() const { return kind_ == Kind::Symbol; }
  /// The value of a constant.
  int64_t value() const { return value_; }
  /// The name of a symbol.
  const std::string &name() const { return name_; }
  /// The operands of the other kinds.
  const Expr &lhs() const { return operands_[0]; }
  const Expr &rhs() const { return operands_[1]; }

  /// The canonical text: "M", "roundup(M, 4)", "M*16 + 8", ...; parse()
  /// reads it back to an equal expression.
  std::string str() const;
  /// The symbols it names, each once, in order of appearance.
  std::vector<std::string> symbols() const;

  /// The value for the symbol values `lookup` gives (false for an unbound
  /// symbol). Returns false, saying why in `error`, for an unbound symbol,
  /// an int64 overflow, or a ceildiv/roundup by a value below 1 or of a
  /// negative value.
  using SymbolLookup = std::function<bool(const std::string &, int64_t &)>;
  bool evaluate(const SymbolLookup &lookup, int64_t &out,
                std::string &error) const;

  /// Whether this expression has the shape of `pattern`, in which the
  /// symbol SYM stands for any symbol and INT for any constant in
  /// [intMin, intMax].
  bool matches(const Expr &pattern, int64_t intMin, int64_t intMax) const;

  bool operator==(const Expr &other) const;
  bool operator!=(const Expr &other) const { return !(*this == other); }

private:
  static Expr binary(Kind kind, Expr lhs, Expr rhs);

  Kind kind_ = Kind::Constant;
  int64_t value_ = 0;
  std::string name_;
  std::vector<Expr> operands_;
};

/// Whether `s` is a symbol name: [A-Za-z_][A-Za-z0-9_]*.
bool isSymbolName(std::string_view s);

/// What a field of expression type takes (a schema definition with
/// `x-expr`): an integer in [min, max] that is a multiple of `multipleOf`,
/// or a string whose expression has the shape of one of `patterns` (with
/// INT in [intMin, intMax]), or any expression when `patterns` is empty.
struct ExprForm {
  const char *name;     ///< the schema definition, e.g. "Extent"
  const char *noun;     ///< "an extent", for messages
  const char *expected; ///< what the strings may be, for messages
  int64_t min, max;
  int64_t multipleOf;
  const char *multipleOfReason; ///< nullptr or said after the multiple
  std::vector<const char *> patterns;
  int64_t intMin, intMax;
};

/// Checks a constant against `form`: "" when it fits, else the problem
/// ("value 0 is out of range [1, 4096]").
std::string checkExprConstant(int64_t value, const ExprForm &form);

/// Parses `text` as an expression of `form` into `out`: "" when it is one,
/// else the problem ("\"2M\" is not a symbol ...", "\"M*M\" is not a stride
/// expression (expected ...)").
std::string parseExprString(std::string_view text, const ExprForm &form,
                            Expr &out);

/// "expected an integer or a string \"SYM\", \"SYM*INT\" or \"INT*SYM\"": what
/// a value of the wrong JSON type is told.
std::string describeExprForm(const ExprForm &form);

} // namespace fp8schema

#endif // FP8SCHEMA_EXPR_H

//===- Expr.cpp - Integer expressions of run-time symbols -----------------===//

#include "fp8schema/Expr.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace fp8schema {

Expr Expr::constant(int64_t value) {
  Expr e;
  e.value_ = value;
  return e;
}

Expr Expr::symbol(std::string name) {
  Expr e;
  e.kind_ = Kind::Symbol;
  e.name_ = std::move(name);
  return e;
}

Expr Expr::binary(Kind kind, Expr lhs, Expr rhs) {
  Expr e;
  e.kind_ = kind;
  e.operands_.reserve(2);
  e.operands_.push_back(std::move(lhs));
  e.operands_.push_back(std::move(rhs));
  return e;
}

Expr Expr::add(Expr lhs, Expr rhs) {
  return binary(Kind::Add, std::move(lhs), std::move(rhs));
}
Expr Expr::mul(Expr lhs, Expr rhs) {
  return binary(Kind::Mul, std::move(lhs), std::move(rhs));
}
Expr Expr::ceilDiv(Expr lhs, Expr rhs) {
  return binary(Kind::CeilDiv, std::move(lhs), std::move(rhs));
}
Expr Expr::roundUp(Expr lhs, Expr rhs) {
  return binary(Kind::RoundUp, std::move(lhs), std::move(rhs));
}

bool isSymbolName(std::string_view s) {
  auto isAlpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (s.empty() || !isAlpha(s[0]))
    return false;
  return std::all_of(s.begin() + 1, s.end(), [&](char c) {
    return isAlpha(c) || (c >= '0' && c <= '9');
  });
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

namespace {
class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool parse(Expr &out, std::string &error) {
    if (!parseSum(out) || (skipSpaces(), pos_ != text_.size())) {
      if (error_.empty())
        error_ = "unexpected '" + std::string(1, text_[pos_]) + "'";
      error = error_ + " at offset " + std::to_string(pos_);
      return false;
    }
    return true;
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;

  void skipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool fail(std::string message) {
    if (error_.empty())
      error_ = std::move(message);
    return false;
  }

  // sum := product ('+' product)*; product := atom ('*' atom)*.
  bool parseSum(Expr &out) { return parseLevel('+', out); }
  bool parseLevel(char op, Expr &out) {
    auto operand = [&](Expr &e) {
      return op == '+' ? parseLevel('*', e) : parseAtom(e);
    };
    if (!operand(out))
      return false;
    while (consume(op)) {
      Expr rhs;
      if (!operand(rhs))
        return false;
      out = op == '+' ? Expr::add(std::move(out), std::move(rhs))
                      : Expr::mul(std::move(out), std::move(rhs));
    }
    return true;
  }

  bool parseAtom(Expr &out) {
    skipSpaces();
    if (pos_ == text_.size())
      return fail("unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      if (!parseSum(out))
        return false;
      return consume(')') || fail("expected ')'");
    }
    if (c >= '0' && c <= '9')
      return parseInteger(out);
    size_t start = pos_;
    while (pos_ < text_.size() && isWordChar(text_[pos_]))
      ++pos_;
    std::string_view word = text_.substr(start, pos_ - start);
    if (word.empty())
      return fail("unexpected '" + std::string(1, c) + "'");
    bool isFunction = word == "ceildiv" || word == "roundup";
    if (!isFunction || !consume('(')) {
      out = Expr::symbol(std::string(word));
      return true;
    }
    Expr lhs, rhs;
    if (!parseSum(lhs))
      return false;
    if (!consume(','))
      return fail("expected ','");
    if (!parseSum(rhs))
      return false;
    if (!consume(')'))
      return fail("expected ')'");
    out = word == "ceildiv" ? Expr::ceilDiv(std::move(lhs), std::move(rhs))
                            : Expr::roundUp(std::move(lhs), std::move(rhs));
    return true;
  }

  bool parseInteger(Expr &out) {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value))
        return fail("integer does not fit in 64 bits");
      ++pos_;
    }
    if (pos_ - start > 1 && text_[start] == '0')
      return fail("integer with a leading zero");
    out = Expr::constant(value);
    return true;
  }
};
} // namespace

bool Expr::parse(std::string_view text, Expr &out, std::string &error) {
  return Parser(text).parse(out, error);
}

//===----------------------------------------------------------------------===//
// Printing, comparing, evaluating
//===----------------------------------------------------------------------===//

std::string Expr::str() const {
  switch (kind_) {
  case Kind::Constant:
    return std::to_string(value_);
  case Kind::Symbol:
    return name_;
  case Kind::Add: {
    const Expr &r = rhs();
    std::string right = r.kind_ == Kind::Add ? "(" + r.str() + ")" : r.str();
    return lhs().str() + " + " + right;
  }
  case Kind::Mul: {
    auto operand = [](const Expr &e, bool isRhs) {
      bool paren = e.kind_ == Kind::Add || (isRhs && e.kind_ == Kind::Mul);
      return paren ? "(" + e.str() + ")" : e.str();
    };
    return operand(lhs(), false) + "*" + operand(rhs(), true);
  }
  case Kind::CeilDiv:
  case Kind::RoundUp:
    return std::string(kind_ == Kind::CeilDiv ? "ceildiv(" : "roundup(") +
           lhs().str() + ", " + rhs().str() + ")";
  }
  return "?";
}

std::vector<std::string> Expr::symbols() const {
  std::vector<std::string> out;
  std::function<void(const Expr &)> walk = [&](const Expr &e) {
    if (e.isSymbol() && std::find(out.begin(), out.end(), e.name_) == out.end())
      out.push_back(e.name_);
    for (const Expr &operand : e.operands_)
      walk(operand);
  };
  walk(*this);
  return out;
}

bool Expr::evaluate(const SymbolLookup &lookup, int64_t &out,
                    std::string &error) const {
  switch (kind_) {
  case Kind::Constant:
    out = value_;
    return true;
  case Kind::Symbol:
    if (lookup(name_, out))
      return true;
    error = "symbol " + name_ + " is not bound";
    return false;
  default:
    break;
  }
  int64_t a, b;
  if (!lhs().evaluate(lookup, a, error) || !rhs().evaluate(lookup, b, error))
    return false;
  bool overflow = false;
  switch (kind_) {
  case Kind::Add:
    overflow = __builtin_add_overflow(a, b, &out);
    break;
  case Kind::Mul:
    overflow = __builtin_mul_overflow(a, b, &out);
    break;
  default: {
    if (a < 0 || b < 1) {
      error = str() + " needs a value >= 0 and a divisor >= 1, got " +
              std::to_string(a) + " and " + std::to_string(b);
      return false;
    }
    int64_t quotient = a / b + (a % b != 0);
    if (kind_ == Kind::CeilDiv)
      out = quotient;
    else
      overflow = __builtin_mul_overflow(quotient, b, &out);
    break;
  }
  }
  if (overflow) {
    error = str() + " overflows int64";
    return false;
  }
  return true;
}

bool Expr::matches(const Expr &pattern, int64_t intMin, int64_t intMax) const {
  if (pattern.isSymbol() && pattern.name_ == "SYM")
    return isSymbol();
  if (pattern.isSymbol() && pattern.name_ == "INT")
    return isConstant() && value_ >= intMin && value_ <= intMax;
  if (kind_ != pattern.kind_ || operands_.size() != pattern.operands_.size())
    return false;
  if (isConstant())
    return value_ == pattern.value_;
  if (isSymbol())
    return name_ == pattern.name_;
  for (size_t i = 0; i < operands_.size(); ++i)
    if (!operands_[i].matches(pattern.operands_[i], intMin, intMax))
      return false;
  return true;
}

bool Expr::operator==(const Expr &other) const {
  return kind_ == other.kind_ && value_ == other.value_ &&
         name_ == other.name_ && operands_ == other.operands_;
}

//===----------------------------------------------------------------------===//
// Forms
//===----------------------------------------------------------------------===//

std::string checkExprConstant(int64_t value, const ExprForm &form) {
  if (value < form.min || value > form.max)
    return "value " + std::to_string(value) + " is out of range [" +
           std::to_string(form.min) + ", " + std::to_string(form.max) + "]";
  if (form.multipleOf > 1 && value % form.multipleOf != 0)
    return "value " + std::to_string(value) + " is not a multiple of " +
           std::to_string(form.multipleOf) +
           (form.multipleOfReason
                ? " (" + std::string(form.multipleOfReason) + ")"
                : std::string());
  return "";
}

std::string parseExprString(std::string_view text, const ExprForm &form,
                            Expr &out) {
  std::string quoted = "\"" + std::string(text) + "\"";
  std::string error;
  bool parsed = Expr::parse(text, out, error);
  if (form.patterns.empty())
    return parsed ? "" : quoted + " is not an expression (" + error + ")";
  if (parsed)
    for (const char *pattern : form.patterns) {
      Expr shape;
      if (Expr::parse(pattern, shape, error) &&
          out.matches(shape, form.intMin, form.intMax))
        return "";
    }
  // A single word (such as "2M" or "128") was meant as a symbol.
  size_t first = text.find_first_not_of(' ');
  size_t last = text.find_last_not_of(' ');
  bool isWord =
      first != std::string_view::npos &&
      std::all_of(text.begin() + first, text.begin() + last + 1, isWordChar);
  if (isWord)
    return quoted + " is not a symbol (symbols are identifiers such as \"M\")";
  return quoted + " is not " + form.noun + " (expected " + form.expected + ")";
}

std::string describeExprForm(const ExprForm &form) {
  if (form.patterns.empty())
    return "an integer or an expression string";
  std::string out = "an integer or a string ";
  for (size_t i = 0; i < form.patterns.size(); ++i) {
    if (i)
      out += i + 1 == form.patterns.size() ? " or " : ", ";
    out += "\"" + std::string(form.patterns[i]) + "\"";
  }
  return out;
}

} // namespace fp8schema

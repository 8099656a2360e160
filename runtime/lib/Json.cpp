#include "Json.h"

#include <charconv>
#include <set>
#include <system_error>

namespace fp8rt::json {

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

const Value *Value::find(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

namespace {

// Deep nesting would only come from a broken or hostile file; the limit keeps
// the recursion bounded.
constexpr int kMaxDepth = 100;

std::string describeByte(unsigned char c) {
  if (c >= 0x20 && c < 0x7f)
    return std::string("'") + static_cast<char>(c) + "'";
  static const char hex[] = "0123456789abcdef";
  return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
}

class Parser {
public:
  Parser(std::string_view text, ParseError &error)
      : text_(text), error_(error) {}

  bool parseDocument(Value &out) {
    skipWhitespace();
    if (!parseValue(out, 0))
      return false;
    skipWhitespace();
    if (pos_ != text_.size())
      return fail(strCatUnexpected("after the top-level value"));
    return true;
  }

private:
  std::string_view text_;
  ParseError &error_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t lineStart_ = 0;

  Location here() const {
    return Location{line_, static_cast<int>(pos_ - lineStart_) + 1};
  }
  bool atEnd() const { return pos_ >= text_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }

  bool fail(std::string message) { return failAt(here(), std::move(message)); }
  bool failAt(Location where, std::string message) {
    error_.message = std::move(message);
    error_.location = where;
    return false;
  }
  std::string strCatUnexpected(const char *context) const {
    if (atEnd())
      return std::string("unexpected end of input ") + context;
    return "unexpected " + describeByte(peek()) + " " + context;
  }

  void skipWhitespace() {
    while (!atEnd()) {
      char c = text_[pos_];
      if (c == '\n') {
        ++pos_;
        ++line_;
        lineStart_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  bool consumeLiteral(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  // `depth` counts the arrays and objects around this value.
  bool parseValue(Value &out, int depth) {
    out = Value();
    out.location = here();
    if (atEnd())
      return fail("unexpected end of input, expected a value");
    if ((peek() == '{' || peek() == '[') && depth >= kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    switch (peek()) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = Kind::String;
      return parseString(out.string);
    case 't':
      out.kind = Kind::Bool;
      out.boolean = true;
      return consumeLiteral("true") || fail("invalid literal, expected 'true'");
    case 'f':
      out.kind = Kind::Bool;
      return consumeLiteral("false") ||
             fail("invalid literal, expected 'false'");
    case 'n':
      return consumeLiteral("null") || fail("invalid literal, expected 'null'");
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return parseNumber(out);
      return fail(strCatUnexpected("where a value was expected"));
    }
  }

  bool parseObject(Value &out, int depth) {
    out.kind = Kind::Object;
    ++pos_; // '{'
    skipWhitespace();
    if (!atEnd() && peek() == '}') {
      ++pos_;
      return true;
    }
    std::set<std::string> seenKeys;
    while (true) {
      skipWhitespace();
      if (atEnd() || peek() != '"')
        return fail(strCatUnexpected("where an object key (a string) was "
                                     "expected"));
      Location keyLocation = here();
      std::string key;
      if (!parseString(key))
        return false;
      if (!seenKeys.insert(key).second)
        return failAt(keyLocation, "duplicate key \"" + key + "\"");
      skipWhitespace();
      if (atEnd() || peek() != ':')
        return fail(strCatUnexpected("where ':' was expected"));
      ++pos_;
      skipWhitespace();
      out.object.emplace_back(std::move(key), Value());
      if (!parseValue(out.object.back().second, depth + 1))
        return false;
      skipWhitespace();
      if (!atEnd() && peek() == ',') {
        ++pos_;
        continue;
      }
      if (!atEnd() && peek() == '}') {
        ++pos_;
        return true;
      }
      return fail(strCatUnexpected("where ',' or '}' was expected"));
    }
  }

  bool parseArray(Value &out, int depth) {
    out.kind = Kind::Array;
    ++pos_; // '['
    skipWhitespace();
    if (!atEnd() && peek() == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipWhitespace();
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth + 1))
        return false;
      skipWhitespace();
      if (!atEnd() && peek() == ',') {
        ++pos_;
        continue;
      }
      if (!atEnd() && peek() == ']') {
        ++pos_;
        return true;
      }
      return fail(strCatUnexpected("where ',' or ']' was expected"));
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool parseNumber(Value &out) {
    out.kind = Kind::Number;
    size_t start = pos_;
    if (peek() == '-')
      ++pos_;
    if (atEnd() || !isDigit(text_[pos_]))
      return fail("invalid number: expected a digit");
    if (text_[pos_] == '0') {
      ++pos_;
      if (!atEnd() && isDigit(text_[pos_]))
        return fail("invalid number: leading zeros are not allowed");
    } else {
      while (!atEnd() && isDigit(text_[pos_]))
        ++pos_;
    }
    bool integral = true;
    if (!atEnd() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (atEnd() || !isDigit(text_[pos_]))
        return fail("invalid number: expected a digit after '.'");
      while (!atEnd() && isDigit(text_[pos_]))
        ++pos_;
    }
    if (!atEnd() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (!atEnd() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (atEnd() || !isDigit(text_[pos_]))
        return fail("invalid number: expected a digit in the exponent");
      while (!atEnd() && isDigit(text_[pos_]))
        ++pos_;
    }
    const char *first = text_.data() + start;
    const char *last = text_.data() + pos_;
    if (integral) {
      auto [ptr, ec] = std::from_chars(first, last, out.integer);
      if (ec == std::errc() && ptr == last)
        out.isInteger = true;
    }
    // from_chars is locale-independent, unlike strtod.
    auto [ptr, ec] = std::from_chars(first, last, out.number);
    if (ec != std::errc() || ptr != last)
      return failAt(out.location, "number out of range");
    return true;
  }

  static int hexValue(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(uint32_t &value) {
    value = 0;
    for (int i = 0; i < 4; ++i) {
      if (atEnd() || hexValue(text_[pos_]) < 0)
        return fail("invalid \\u escape: expected 4 hex digits");
      value = value * 16 + static_cast<uint32_t>(hexValue(text_[pos_]));
      ++pos_;
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Copies one UTF-8 encoded code point starting at pos_ (a byte >= 0x80),
  // rejecting overlong forms, surrogates and code points above U+10FFFF.
  bool copyUtf8Sequence(std::string &out) {
    unsigned char lead = peek();
    int length;
    uint32_t cp;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      cp = lead & 0x07;
    } else {
      return fail("invalid UTF-8 in string (" + describeByte(lead) + ")");
    }
    if (pos_ + length > text_.size())
      return fail("invalid UTF-8 in string (truncated sequence)");
    for (int i = 1; i < length; ++i) {
      unsigned char c = static_cast<unsigned char>(text_[pos_ + i]);
      if ((c & 0xC0) != 0x80)
        return fail("invalid UTF-8 in string (bad continuation byte)");
      cp = (cp << 6) | (c & 0x3F);
    }
    static const uint32_t minimum[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minimum[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return fail("invalid UTF-8 in string (overlong form, surrogate or "
                  "code point above U+10FFFF)");
    out.append(text_.data() + pos_, length);
    pos_ += length;
    return true;
  }

  bool parseString(std::string &out) {
    ++pos_; // opening quote
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail("control character " + describeByte(c) +
                    " in string (escape it)");
      if (c >= 0x80) {
        if (!copyUtf8Sequence(out))
          return false;
        continue;
      }
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_; // backslash
      if (atEnd())
        return fail("unterminated string");
      char escape = text_[pos_++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out.push_back(escape);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return fail("invalid \\u escape: unpaired low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low;
          if (!consumeLiteral("\\u"))
            return fail("invalid \\u escape: high surrogate not followed by "
                        "a low surrogate");
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("invalid \\u escape: high surrogate not followed by "
                        "a low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        pos_ -= 2; // point at the backslash
        return fail("invalid escape: backslash followed by " +
                    describeByte(static_cast<unsigned char>(escape)));
      }
    }
  }
};

} // namespace

bool parse(std::string_view text, Value &out, ParseError &error) {
  Parser parser(text, error);
  return parser.parseDocument(out);
}

} // namespace fp8rt::json

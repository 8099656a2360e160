#include "PtxSignature.h"

namespace fp8rt {

namespace {

struct Token {
  std::string text;
  bool isNumber = false;
};

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Splits PTX into directives (".param"), identifiers, numbers and single
// punctuation characters, dropping whitespace, comments and strings.
// ".ptr.global.align" becomes three directives, as PTX reads it.
std::vector<Token> tokenize(std::string_view ptx) {
  std::vector<Token> tokens;
  size_t i = 0, n = ptx.size();
  while (i < n) {
    char c = ptx[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '/') {
      while (i < n && ptx[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '*') {
      size_t end = ptx.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
    } else if (c == '"') {
      size_t end = ptx.find('"', i + 1);
      i = end == std::string_view::npos ? n : end + 1;
    } else if (c == '.' || c == '%' || isIdentChar(c)) {
      size_t start = i++;
      while (i < n && isIdentChar(ptx[i]))
        ++i;
      Token token;
      token.text = std::string(ptx.substr(start, i - start));
      token.isNumber = c >= '0' && c <= '9';
      tokens.push_back(std::move(token));
    } else {
      tokens.push_back(Token{std::string(1, c), false});
      ++i;
    }
  }
  return tokens;
}

size_t typeSize(const std::string &type) {
  static const struct {
    const char *name;
    size_t size;
  } kTypes[] = {{".b8", 1},    {".u8", 1},     {".s8", 1},  {".b16", 2},
                {".u16", 2},   {".s16", 2},    {".f16", 2}, {".bf16", 2},
                {".b32", 4},   {".u32", 4},    {".s32", 4}, {".f32", 4},
                {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8}, {".u64", 8},
                {".s64", 8},   {".f64", 8}};
  for (const auto &t : kTypes)
    if (type == t.name)
      return t.size;
  return 0;
}

bool parseNumber(const std::string &text, size_t &out) {
  if (text.empty() || text.size() > 9)
    return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + static_cast<size_t>(c - '0');
  }
  return true;
}

} // namespace

Status parsePtxEntryParams(std::string_view ptx, std::string_view entry,
                           std::vector<PtxParam> &out) {
  std::vector<Token> tokens = tokenize(ptx);
  size_t i = 0;
  for (; i + 1 < tokens.size(); ++i)
    if (tokens[i].text == ".entry" && tokens[i + 1].text == entry)
      break;
  if (i + 1 >= tokens.size())
    return invalidMetadata("the PTX has no .entry named \"", entry, "\"");
  i += 2;
  out.clear();
  if (i >= tokens.size() || tokens[i].text != "(")
    return Status(); // `.entry name {`: no parameters
  ++i;
  if (i < tokens.size() && tokens[i].text == ")")
    return Status();
  while (true) {
    PtxParam param;
    size_t explicitAlign = 0, elementSize = 0, count = 1;
    bool haveName = false;
    if (i >= tokens.size() || tokens[i].text != ".param")
      return invalidMetadata("PTX entry \"", entry, "\": parameter ",
                             out.size(), " does not start with .param");
    for (; i < tokens.size() && tokens[i].text != "," && tokens[i].text != ")";
         ++i) {
      const std::string &t = tokens[i].text;
      if (!param.declaration.empty() && t != "[" && t != "]" &&
          param.declaration.back() != '[')
        param.declaration += ' ';
      param.declaration += t;
      if (t == ".align" && i + 1 < tokens.size()) {
        size_t value;
        if (!parseNumber(tokens[i + 1].text, value))
          return invalidMetadata("PTX entry \"", entry,
                                 "\": bad .align in "
                                 "parameter ",
                                 out.size());
        param.declaration += " " + tokens[i + 1].text;
        ++i;
        // An .align after the type belongs to `.ptr` (the pointee's
        // alignment), not to the parameter.
        if (elementSize == 0)
          explicitAlign = value;
      } else if (size_t size = typeSize(t)) {
        elementSize = size;
      } else if (t == "[" && i + 2 < tokens.size() &&
                 tokens[i + 2].text == "]") {
        if (!parseNumber(tokens[i + 1].text, count) || count == 0)
          return invalidMetadata("PTX entry \"", entry,
                                 "\": bad array size in "
                                 "parameter ",
                                 out.size());
        param.declaration += tokens[i + 1].text + "]";
        i += 2;
      } else if (t[0] != '.' && !tokens[i].isNumber) {
        haveName = true;
      }
    }
    if (elementSize == 0 || !haveName)
      return invalidMetadata("PTX entry \"", entry,
                             "\": cannot read parameter ", out.size(), " (\"",
                             param.declaration, "\")");
    param.size = elementSize * count;
    param.alignment = explicitAlign ? explicitAlign : elementSize;
    out.push_back(std::move(param));
    if (i >= tokens.size())
      return invalidMetadata("PTX entry \"", entry,
                             "\": unterminated parameter list");
    if (tokens[i].text == ")")
      return Status();
    ++i; // ','
  }
}

Status checkPtxMatchesMetadata(std::string_view ptx, const KernelMetadata &meta,
                               std::string_view sourceName) {
  std::vector<PtxParam> ptxParams;
  Status status = parsePtxEntryParams(ptx, meta.entry, ptxParams);
  if (!status.ok())
    return status.prepend(strCat(sourceName, ": "));
  if (ptxParams.size() != meta.params.size())
    return invalidMetadata(sourceName, ": the metadata lists ",
                           meta.params.size(), " params but PTX entry \"",
                           meta.entry, "\" takes ", ptxParams.size());
  for (size_t i = 0; i < ptxParams.size(); ++i) {
    const ParamSpec &param = meta.params[i];
    const PtxParam &actual = ptxParams[i];
    bool gridConstantMap = param.kind == ParamKind::TensorMap &&
                           param.passing == TensorMapPassing::GridConstant;
    bool ok = actual.size == param.size &&
              (!gridConstantMap || actual.alignment % 64 == 0);
    if (!ok)
      return invalidMetadata(
          sourceName, ": params[", i, "] \"", param.name, "\" (",
          paramKindName(param.kind), gridConstantMap ? ", grid_constant" : "",
          ") needs ",
          gridConstantMap ? "a 128-byte parameter aligned to 64 bytes"
                          : strCat("a ", param.size, "-byte parameter"),
          " but PTX entry \"", meta.entry, "\" declares \"", actual.declaration,
          "\" (", actual.size, " bytes, align ", actual.alignment, ")");
  }
  return Status();
}

} // namespace fp8rt

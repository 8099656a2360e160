// Input of test/Style/sizes.test: braces in "strings { {" and comments {.
namespace outer {
struct Table {
  int lookup(int key) const { return key; }
};
static const int kValues[] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
};
enum class Kind {
  A,
  B,
};
} // namespace outer

// Nine lines from its signature to its brace: reported.
int nine(int a,
         int b) {
  int c = a + b;
  auto lambda = [&](int x) { return x + c; };
  if (c > 0) {
    c = lambda(c);
  }
  return c;
}

// Eight lines: not reported.
int eight(int a) {
  const char *s = "}}}";
  /* { */ int b = a;
  b += 1;
  b += 2;
  b += 3;
  return b + s[0];
}

Table::Table()
    : values{1, 2} {
  for (int i = 0; i < 2; ++i) {
    values[i] += i;
  }
  // {
  values[0] += 1;
  values[1] += 1;
  values[0] += values[1];
}

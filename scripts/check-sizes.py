#!/usr/bin/env python3
"""Reports C++ source files and functions that are too long to read.

    check-sizes.py ROOT [--max-file-lines N] [--max-function-lines N]
                        [DIR ...]

Checks every C/C++ source and header (.cpp .cc .c .h .hpp) under the DIRs
of ROOT (default: lib include runtime tools) outside build directories and
`unittests` folders (test files are long lists of cases; their size is not
a reading problem). Prints `FILE:LINE: message` for each file above the
file limit (default 800 lines) and each function above the function limit
(default 150 lines, from the first line of its signature to its closing
brace); the last line is `N files checked, M problems`; the exit status is
1 when there is a problem.

Functions are found by brace matching on the source with comments, string
and character literals removed: a `{` opens a function body when the text
before it (since the previous `;`, `{` or `}`) reads as a signature (it has
a parameter list and is not a control statement, an initializer, a class,
an enum or a namespace). Lambdas and local classes count as part of the
function that contains them. A heuristic: macros that hide braces or
signatures split across preprocessor branches may confuse it.
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp")
DEFAULT_DIRS = ("lib", "include", "runtime", "tools")
SKIPPED_DIRS = {"unittests", ".git", "__pycache__"}

CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try)\b")
TYPE_HEAD = re.compile(r"\b(class|struct|union|enum)\b[^()]*$")
NAMESPACE = re.compile(r"^(namespace\b|extern\s*\"C\"|extern\s*$)")


def strip_code(text):
    """`text` with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            # Raw string literal R"delim( ... )delim".
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and \
                    i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_signature(head):
    """Whether `head`, the code before a `{`, is a function's signature."""
    head = " ".join(head.split())
    # Drop template heads and attributes; preprocessor lines were removed.
    if not head or ")" not in head:
        return False
    if CONTROL.match(head) or NAMESPACE.match(head):
        return False
    if TYPE_HEAD.search(head.split("(")[0]):
        return False
    # An initializer (`x = {`, `return {`, `f({`) or a lambda (`](...) {`).
    depth = 0
    for ch in head:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "=" and depth == 0:
            # operator=, operator==, ... are signatures.
            if "operator" not in head:
                return False
    if depth != 0 or head.startswith("return") or head.endswith(","):
        return False
    tail = head[head.rfind(")") + 1:].strip()
    # After the parameters: qualifiers, a trailing return type, or a
    # constructor's member initializers.
    if tail and not re.fullmatch(
            r"(\s|const|override|final|noexcept|volatile|&&?)*(->.*|:.*)?",
            tail):
        return False
    if re.search(r"\]\s*\([^()]*\)\s*(mutable\s*)?(->[^{]*)?$", head) and \
            not re.search(r"\boperator\s*\[\]", head):
        return False  # a lambda
    return True


def is_member_initializer(head):
    """Whether a `{` after `head` brace-initializes a member in a
    constructor's initializer list (`Foo() : a(1), b{`)."""
    head = " ".join(head.split())
    close = head.rfind(")")
    if close < 0 or CONTROL.match(head):
        return False
    tail = head[close + 1:].strip()
    return bool(re.fullmatch(r"(noexcept\s*)?:.*[A-Za-z0-9_>]", tail))


def functions(code):
    """(start line, end line) of each function body in stripped `code`."""
    found = []
    stack = []  # (is function or inside one, start line)
    head_start = None  # offset of the first code character of the head
    line = 1
    line_of_offset = []
    for ch in code:
        line_of_offset.append(line)
        if ch == "\n":
            line += 1
    last_boundary = 0
    i = 0
    n = len(code)
    # Preprocessor lines are not part of any head.
    lines = code.split("\n")
    skip = set()
    offset = 0
    for text in lines:
        if text.lstrip().startswith("#"):
            skip.update(range(offset, offset + len(text)))
        offset += len(text) + 1
    while i < n:
        ch = code[i]
        if i in skip:
            i += 1
            continue
        if ch == "{":
            head = "".join(code[k] for k in range(last_boundary, i)
                           if k not in skip)
            inside_function = any(f for f, _, _ in stack)
            if is_member_initializer(head):
                # `Foo() : member{...} {`: the head goes on after it.
                stack.append((inside_function, None, True))
                i += 1
                continue
            if not inside_function and is_signature(head):
                start = last_boundary
                while start < i and (code[start].isspace() or start in skip):
                    start += 1
                stack.append((True, line_of_offset[start], False))
            else:
                stack.append((inside_function, None, False))
            last_boundary = i + 1
        elif ch == "}":
            if stack:
                _, start, initializer = stack.pop()
                if start is not None:
                    found.append((start, line_of_offset[i]))
                if initializer:
                    i += 1
                    continue
            last_boundary = i + 1
        elif ch == ";":
            last_boundary = i + 1
        elif ch == ":" and i + 1 < n and code[i + 1] != ":" and \
                (i == 0 or code[i - 1] != ":"):
            # `public:` / `case X:` end a head; a constructor's initializer
            # list (`) :`) does not.
            before = code[last_boundary:i].strip()
            if re.search(r"(public|private|protected|default)$", before) or \
                    re.match(r"^case\b", before):
                last_boundary = i + 1
        i += 1
    return found


def check(root, dirs, max_file, max_function):
    problems = []
    checked = 0
    for top in dirs:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIPPED_DIRS and not d.startswith("build"))
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                checked += 1
                count = text.count("\n") + (not text.endswith("\n"))
                if count > max_file:
                    problems.append(f"{rel}:1: {count} lines (at most "
                                    f"{max_file}): split the file by role")
                for start, end in functions(strip_code(text)):
                    length = end - start + 1
                    if length > max_function:
                        problems.append(
                            f"{rel}:{start}: function of {length} lines (at "
                            f"most {max_function}): split it")
    return checked, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root")
    parser.add_argument("dirs", nargs="*", default=list(DEFAULT_DIRS))
    parser.add_argument("--max-file-lines", type=int, default=800)
    parser.add_argument("--max-function-lines", type=int, default=150)
    args = parser.parse_intermixed_args()
    checked, problems = check(args.root, args.dirs, args.max_file_lines,
                              args.max_function_lines)
    for problem in problems:
        print(problem)
    print(f"{checked} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

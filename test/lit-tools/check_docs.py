#!/usr/bin/env python3
"""Checks the project's Markdown documentation.

    check_docs.py links   ROOT [FILE.md ...]
    check_docs.py history ROOT [FILE.md ...]

Without FILEs, `links` checks every *.md file git tracks under ROOT (or, in
a tree that is not a git checkout, every *.md file below ROOT outside build
directories), and `history` checks the hand-written documentation listed in
HISTORY_FILES. Paths under an `Inputs` directory (test fixtures) are left
out of the default sets. Each problem is printed as `FILE:LINE: message`;
the last line is `N files checked, M problems`; the exit status is 1 when
there is a problem.

links: every relative link and image in Markdown syntax (`[text](target)`,
`![alt](target)`, `[id]: target`) and every HTML `href`/`src` must name a
file or directory that exists, relative to the file that links; a
`#anchor` (alone, or after a .md target) must be a heading of the target
file, slugged as GitHub does (see `github_slug`), or an HTML `id`/`name`
there. Links with a scheme (https:, mailto:) are not followed; anchors into
files other than Markdown (e.g. `#L10` of a source file) are not checked.
Code (fenced blocks and inline code spans) is not parsed for links.

history: the documentation describes the project as it is now; history is
what git log is for. The patterns in HISTORY_PATTERNS name development
rounds, session and issue numbers, scratch paths and "planned" work; each
pattern says what it catches and what it deliberately lets through. Fenced
code blocks are not searched (commands and their output are not prose).
"""
import html
import os
import re
import subprocess
import sys
import unicodedata
from urllib.parse import unquote

# The hand-written documentation that must read as the current state.
# docs/*.md means the files directly in docs/ (not docs/generated/, which
# mlir-tblgen writes from the .td descriptions).
HISTORY_FILES = (
    "README.md",
    "docs/*.md",
    "bench/README.md",
    "bench/NOTES.md",
    "python/README.md",
    "python/RESULTS.md",
    "runtime/README.md",
)

# (name, regex, flags, what it is for). Kept narrow on purpose: each one
# was checked against the current docs for false positives.
HISTORY_PATTERNS = (
    ("session number",
     r"\bsessions?[ _-]?\d+", re.IGNORECASE,
     "'session 5', 'session-4', 'session7': a development round"),
    ("issue number",
     r"\bissues?[ _-]?#?\d+", re.IGNORECASE,
     "'issue 3', 'issue #12', 'issue6-kernels': issue numbers belong in git "
     "log, not in user docs"),
    ("issue reference",
     r"(?<![\w&/#])#\d+\b", 0,
     "'#19' as a GitHub issue or pull request reference"),
    ("numbered round",
     r"\b[vq]\d+[a-z]?\b(?![.\d])", 0,
     "'v14', 'v14h', 'q2b': kernel versions named by development round; "
     "version numbers with a dot ('OCP v1.0') are not rounds"),
    ("numbered round",
     r"\(s\d+\)", 0,
     "'(s3)': a round in parentheses"),
    ("scratch path",
     r"\.gpu/", 0,
     "'.gpu/s18/...': a scratch directory of the GPU machine, not in the "
     "repository"),
    ("planned",
     r"\bplanned\b", re.IGNORECASE,
     "'(planned)': the docs describe what exists; an unsupported case is "
     "said to be unsupported"),
    ("not yet",
     r"\bnot yet\b", re.IGNORECASE,
     "'not yet': a promise about the future; say what is and is not "
     "supported"),
    ("development log",
     r"\b(found on the way|until (?:recently|now)|we now)\b", re.IGNORECASE,
     "phrases that narrate how the code changed ('no longer' and 'used to' "
     "are left alone: 'contexts that no longer exist' is a fact)"),
    ("source seed",
     r"\bseed \d{3}\b", re.IGNORECASE,
     "'seed 000': the project's private source documents"),
    ("private spec",
     r"shared/spec/", 0,
     "the project's private specs; cite the PTX ISA, a public source or "
     "the project's own docs"),
    ("narrative date",
     r"\b20\d\d-\d\d-\d\d\b", 0,
     "an ISO date in prose ('on 2026-11-22 we ...'); allowed on a line that "
     "says 'measured on' (result file names carry their date as 20261122)"),
)

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"""<[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            if in_fence is None:
                in_fence = fence.group(1)
            elif fence.group(1) == in_fence:
                in_fence = None
            continue
        if in_fence is None:
            yield number, line


def strip_inline_code(line):
    return INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown source."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", raw)   # images -> alt
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)   # links -> text
    text = re.sub(r"<[^>]+>", "", text)                     # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*)", "", text)
    return html.unescape(text).strip()


def github_slug(text):
    """GitHub's heading anchor (github-slugger): lower case; every character
    that is not a letter, mark, number, connector punctuation (`_`), space
    or hyphen removed; each space becomes a hyphen."""
    out = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if cat[0] in "LMN" or cat == "Pc" or ch in " -":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def anchors_of(path, cache={}):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    anchors, seen = set(), {}
    previous = None
    for _, line in prose_lines(text):
        raw = None
        m = ATX_HEADING.match(line)
        if m:
            raw = m.group(2)
        elif previous and previous.strip() and SETEXT_UNDERLINE.match(line) \
                and not ATX_HEADING.match(previous):
            raw = previous.strip()
        if raw is not None:
            slug = github_slug(heading_text(raw))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
        anchors.update(HTML_ANCHOR.findall(line))
        previous = line
    cache[path] = anchors
    return anchors


def link_targets(line):
    code_free = strip_inline_code(line)
    for m in MD_LINK.finditer(code_free):
        yield m.group(1)
    m = REF_DEF.match(code_free)
    if m:
        yield m.group(1)
    yield from HTML_LINK.findall(code_free)


def check_links(root, path):
    problems = []
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        text = f.read()
    for number, line in prose_lines(text):
        for target in link_targets(line):
            target = target.strip("<>")
            if SCHEME.match(target) or target.startswith("//"):
                continue
            file_part, _, anchor = target.partition("#")
            file_part = unquote(file_part)
            dest = full if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(full), file_part))
            if file_part and not os.path.exists(dest):
                problems.append(f"{path}:{number}: broken link '{target}': "
                                f"{os.path.relpath(dest, root)} does not exist")
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if unquote(anchor) not in anchors_of(dest):
                    problems.append(
                        f"{path}:{number}: broken anchor '{target}': no heading "
                        f"'#{anchor}' in {os.path.relpath(dest, root)}")
    return problems


def check_history(root, path):
    problems = []
    with open(os.path.join(root, path), encoding="utf-8") as f:
        text = f.read()
    for number, line in prose_lines(text):
        for name, pattern, flags, _ in HISTORY_PATTERNS:
            if name == "narrative date" and re.search(r"measured on", line, re.I):
                continue
            for m in re.finditer(pattern, line, flags):
                problems.append(f"{path}:{number}: {name}: '{m.group(0)}'")
    return problems


def tracked_markdown(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.md"],
                             check=True, capture_output=True, text=True).stdout
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))
                           and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt"))]
            files += [os.path.relpath(os.path.join(dirpath, f), root)
                      for f in filenames if f.endswith(".md")]
    return sorted(f for f in files if "Inputs" not in f.split("/"))


def history_files(root):
    files = []
    for entry in HISTORY_FILES:
        if entry.endswith("/*.md"):
            folder = entry[:-len("/*.md")]
            files += sorted(os.path.join(folder, f)
                            for f in os.listdir(os.path.join(root, folder))
                            if f.endswith(".md"))
        else:
            files.append(entry)
    return files


def main(argv):
    if len(argv) < 3 or argv[1] not in ("links", "history"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mode, root = argv[1], os.path.abspath(argv[2])
    files = argv[3:] or (tracked_markdown(root) if mode == "links"
                         else history_files(root))
    check = check_links if mode == "links" else check_history
    problems = []
    for path in files:
        if not os.path.isfile(os.path.join(root, path)):
            problems.append(f"{path}: no such file")
            continue
        problems += check(root, path)
    for problem in problems:
        print(problem)
    print(f"{len(files)} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

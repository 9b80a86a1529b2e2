#!/usr/bin/env python3
"""Check that the tree holds nothing a reader cannot open or trust (`make test` runs it).

Run: python3 scripts/check-tree.py   (from anywhere; it reads the files git tracks)

It fails when a tracked text file (sources, tests, scripts, docs, the Makefile, packaging):
- cites what is not in the repository: a design document (`DESIGN §n`), an issue number
  (`issue 12`), a working session (`session 4`), in any case. A date, a commit or a docs anchor
  says the same and can be opened. An address such as github.com/…/issues/12 is not matched
  (no space before the number);
- is Markdown with a relative link (`[text](path)`, `[text](path#anchor)`, `[text]: path`)
  whose file is not tracked, or whose anchor names no heading of that file (GitHub's anchors:
  lower case, punctuation dropped, spaces as hyphens). Links in code blocks and code spans are
  not links, and addresses with a scheme (https:, mailto:) are not checked;
- is Swift with a doc comment that is not on its declaration: one separated from the next line
  by a blank line, or one whose text runs on, unindented and with no blank `///` line between,
  after a `- Returns:`, `- Throws:` or `- Parameter` callout (two comments run together, the
  first one's declaration lost between them). Whether a comment describes the declaration it
  sits on is for the reader; this finds the comments that sit on none, or on the wrong one.
"""
import os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Built from parts so that this file does not match itself.
UNOPENABLE = re.compile(r"DESIGN" r" §|\bissue" r" [0-9]|\bsession" r" [0-9]", re.IGNORECASE)


def tracked():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return sorted({p for p in out.decode().split("\0") if p})  # a file in conflict is listed once per stage


def text_of(path):
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return None  # binary (a recording, an image), or a submodule


def unopenable_references(files):
    problems = []
    for path in files:
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.split("\n"), 1):
            if match := UNOPENABLE.search(line):
                problems.append(f"{path}:{number}: cites {match.group(0)!r}, which a reader cannot open: "
                                f"cite a docs anchor, a date or a commit")
    return problems


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose(text, spans=False):
    """The Markdown text without fenced code blocks, and without code spans unless `spans`
    (same line numbers)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line if spans else re.sub(r"`[^`]*`", "``", line))
    return lines


def anchors(text):
    seen, found = {}, set()
    for line in prose(text, spans=True):
        if match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    for line in text.split("\n"):  # explicit anchors: <a id="…"> or <a name="…">
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return found


# An inline link (its text may run over lines) or a reference definition.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^[ \t]*\[[^\]\n]+\]:[ \t]*(\S+)", re.MULTILINE)


def broken_links(files):
    problems = []
    present = set(files)
    directories = set()
    for p in files:
        while (p := os.path.dirname(p)):
            directories.add(p)
    for path in files:
        if not path.endswith(".md") or (text := text_of(path)) is None:
            continue
        body = "\n".join(prose(text))
        for match in LINK.finditer(body):
            number = body.count("\n", 0, match.start()) + 1
            target = match.group(1) or match.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # https:, mailto:, …
            file, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if resolved not in present and resolved not in directories:
                problems.append(f"{path}:{number}: links to {target}, but {resolved} is not in the tree")
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(text_of(resolved) or ""):
                problems.append(f"{path}:{number}: links to {target}, but {resolved} has no heading "
                                f"whose anchor is #{anchor}")
    return problems


def misplaced_doc_comments(files):
    problems = []
    for path in files:
        if not path.endswith(".swift") or (text := text_of(path)) is None:
            continue
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].lstrip().startswith("///"):
                i += 1
                continue
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("///"):
                j += 1
            block = [line.lstrip()[3:] for line in lines[i:j]]
            after_callout = False
            for k, line in enumerate(block):
                if re.match(r"\s*- (Returns|Throws|Parameters?)\b", line):
                    after_callout = True
                elif not line.strip():
                    after_callout = False
                elif after_callout and not line.startswith("   ") and not re.match(r"\s*- ", line):
                    problems.append(f"{path}:{i + k + 1}: a doc comment runs on after a callout: two comments "
                                    f"run together, the first one's declaration lost between them")
                    break
            if j < len(lines) and not lines[j].strip():
                problems.append(f"{path}:{j}: a doc comment sits on no declaration (a blank line follows it)")
            i = j
    return problems


def main():
    files = [p for p in tracked() if p != "scripts/check-tree.py"]
    problems = unopenable_references(files) + broken_links(tracked()) + misplaced_doc_comments(files)
    for problem in problems:
        print(f"check-tree: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"tree: ok ({len(files)} files: no reference a reader cannot open, every relative link resolves, "
          f"every doc comment on a declaration)")


main()

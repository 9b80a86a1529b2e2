# Copyright kioskd contributors. Licensed under the Apache License, Version 2.0.
"""Keeps a profile's passcode hash out of what a module returns: diffs, check output, messages.

A hash is worth keeping secret: with it a 4-6 digit passcode falls offline in minutes, and what a
module returns ends up on the controller's screen and in its logs. So a `hash = ...` line keeps
its key and loses its value (`hash = "<redacted>"`), and the new text's line says when its value
differs from the old one's (`hash = "<redacted: changed>"`), so that a diff still shows that the
hash changed; anything else shaped like a crypt(3) hash (in an inline table, a multi-line string,
a message) becomes `<redacted>` (`<redacted: changed>` likewise).
"""

from __future__ import annotations

import difflib
import re

# A TOML line setting a key named hash: `hash = ...`, `passcode.hash = ...`, `"hash" = ...`.
_HASH_LINE = re.compile(
    r"""^(?P<key>\s*(?:(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')\s*\.\s*)*(?:hash|"hash"|'hash')\s*=\s*)"""
    r"""(?P<value>.*?)(?P<eol>\r?\n?)$""")
# A value in quotes, then perhaps a comment (kept).
_QUOTED = re.compile(r"""^(?P<string>"[^"]*"|'[^']*')(?P<comment>\s*(?:#.*)?)$""")
# What crypt(3) makes: $id$ then parameters, salt and checksum ($y$j9T$salt$checksum, $6$salt$sum).
_CRYPT = re.compile(r"\$[A-Za-z0-9]{1,8}\$[./A-Za-z0-9$=,]{8,}")

REDACTED = '"<redacted>"'
CHANGED = '"<redacted: changed>"'


def _split(value):
    """(the value, a comment after it) of what follows `hash =`."""
    quoted = _QUOTED.match(value)
    if quoted:
        return quoted.group("string"), quoted.group("comment")
    return value.strip(), ""


def hashes(text):
    """The values of TEXT's hash lines and every crypt(3) hash in it: what must never be shown."""
    found = set()
    for line in (text or "").splitlines():
        match = _HASH_LINE.match(line)
        if match:
            found.add(_split(match.group("value"))[0])
    found.update(_CRYPT.findall(text or ""))
    return found


def redact(text, old=None):
    """TEXT without its hashes. With OLD (the text it replaces), a hash line whose value is not
    one of OLD's says so: `hash = "<redacted: changed>"`."""
    if not text:
        return text
    known = hashes(old) if old is not None else None
    lines = []
    for line in text.splitlines(True):
        match = _HASH_LINE.match(line)
        if match:
            value, comment = _split(match.group("value"))
            marker = CHANGED if known is not None and value not in known else REDACTED
            line = match.group("key") + marker + comment + match.group("eol")
        lines.append(_CRYPT.sub(
            lambda m: "<redacted: changed>" if known is not None and m.group(0) not in known else "<redacted>", line))
    return "".join(lines)


def hash_changed(before, after):
    """Whether AFTER's hashes are not BEFORE's (one added, removed or replaced)."""
    return hashes(before) != hashes(after)


def diff(before, after, path):
    """An Ansible diff of a file's text BEFORE -> AFTER, hashes redacted: already rendered
    ("prepared"), as Ansible renders before/after itself, so that no text with a hash and no
    option's value (Ansible would mask it) is returned."""
    old = (redact(before) or "").splitlines(True)
    new = (redact(after, old=before) or "").splitlines(True)
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    out = "".join(difflib.unified_diff(old, new, fromfile="before: %s" % path, tofile="after: %s" % path,
                                       fromfiledate="", tofiledate=""))
    # A blank line after it, as after a diff Ansible renders.
    return dict(prepared=out + "\n" if out else "")

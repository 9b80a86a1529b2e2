#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that ManagerObject's files follow docs/dbus-api.md's groups (`make test` runs it).

Run: python3 scripts/check-manager-groups.py

docs/dbus-api.md § "Where each group lives" has a table: a group of D-Bus members, the file of
Sources/KioskDaemon that implements it, and its methods. This fails when a method of the
interface XML is in no group or in two, when a group's method is not implemented (as
`func name(_ call: MethodCall)`) in that group's file, or when a ManagerObject file is in no row.
So the split of ManagerObject is the API's, and there is no index in the code to keep by hand.
"""
import glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs/dbus-api.md")
XML = os.path.join(ROOT, "packaging/dbus/org.kioskd.GuidedAccess1.xml")
SOURCES = os.path.join(ROOT, "Sources/KioskDaemon")
HEADING = "## Where each group lives"


def main():
    doc = open(DOC).read()
    if HEADING not in doc:
        sys.exit(f"check-manager-groups: {DOC} has no section {HEADING!r}")
    section = doc.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`"):
            continue
        files = re.findall(r"`(ManagerObject[^`]*\.swift)`", cells[1])
        methods = re.findall(r"`(\w+)`", cells[2])
        rows.append((cells[0], files, methods))
    if not rows:
        sys.exit("check-manager-groups: the table of groups is empty")
    problems = []
    interface = re.findall(r'<method name="(\w+)"', open(XML).read())
    grouped = [m for _, _, methods in rows for m in methods]
    for method in interface:
        if grouped.count(method) != 1:
            problems.append(f"{method} is in {grouped.count(method)} groups of the table (must be in one)")
    for method in set(grouped) - set(interface):
        problems.append(f"{method} is in the table but not in the interface XML")
    listed = {f for _, files, _ in rows for f in files}
    present = {os.path.basename(p) for p in glob.glob(os.path.join(SOURCES, "ManagerObject*.swift"))}
    for name in sorted(present - listed):
        problems.append(f"Sources/KioskDaemon/{name} is in no row of the table")
    for name in sorted(listed - present):
        problems.append(f"the table names Sources/KioskDaemon/{name}, which does not exist")
    for group, files, methods in rows:
        texts = {f: open(os.path.join(SOURCES, f)).read() for f in files if f in present}
        for method in methods:
            func = method[0].lower() + method[1:]
            pattern = re.compile(r"func " + func + r"\(_ call: MethodCall\)")
            where = [p for p in present if pattern.search(open(os.path.join(SOURCES, p)).read())]
            if not any(pattern.search(t) for t in texts.values()):
                problems.append(f"{method} ({group}) is implemented in {where or 'no file'}, not in {files}")
    for problem in problems:
        print(f"check-manager-groups: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"manager groups: ok ({len(rows)} groups, {len(interface)} methods, {len(present)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

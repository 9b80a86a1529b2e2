#!/usr/bin/env python3
"""Check docs/architecture.md's module graph against Package.swift (`make test` runs it).

Run: python3 scripts/check-architecture.py           (SWIFT=/path/to/swift for another toolchain)
     python3 scripts/check-architecture.py --edges   prints the diagram's edges as Package.swift
                                                     has them, to paste into the mermaid block

The diagram (the mermaid block under "The module graph") and its table ("The same graph as a
table") draw the shipped modules: `kioskd` stands for the kioskd executable and KioskdCommand,
`kioskctl` for the kioskctl executable and KioskctlCommands (thin mains, their flags and verbs);
every other node is the target of that name, or a package (Yams, TOMLKit, swift-log as `Log`,
swift-system as `System`). It fails when:
- a local target that kioskd, kioskctl or KioskClient reaches, or a pure module, is not drawn;
- an edge drawn between two nodes is not a dependency in Package.swift, or a dependency between
  two drawn nodes is not drawn (a package may be left out of the drawing, but once drawn, every
  edge to it is);
- a row of the table lists other dependencies than Package.swift gives its module (every one,
  packages included, by the names the table uses).
"""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
# Diagram nodes that stand for more than one target.
GROUPS = {"kioskd": {"kioskd", "KioskdCommand"}, "kioskctl": {"kioskctl", "KioskctlCommands"}}
# Package identity → (diagram node, table name).
PACKAGES = {"yams": ("Yams", "Yams"), "tomlkit": ("TOMLKit", "TOMLKit"), "swift-log": ("Log", "swift-log"),
            "swift-system": ("System", "swift-system"),
            "swift-argument-parser": ("ArgumentParser", "swift-argument-parser")}
ROOTS = ["kioskd", "kioskctl", "KioskClient"]
PURE = ["KioskAPI", "KioskInput", "KioskCore", "KioskTraces", "BridgeCore"]


def manifest():
    swift = os.environ.get("SWIFT", "swift")
    result = subprocess.run([swift, "package", "dump-package"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check-architecture: swift package dump-package failed:\n{result.stderr}")
    return json.loads(result.stdout)


def package_edges(targets):
    """node → set of (node, table name) it depends on, by Package.swift."""
    node_of = {t: g for g, members in GROUPS.items() for t in members}
    edges = {}
    for name, target in targets.items():
        node = node_of.get(name, name)
        out = edges.setdefault(node, set())
        for dep in target["dependencies"]:
            kind, value = next(iter(dep.items()))
            if kind in ("byName", "target") and value[0] in targets:
                other = node_of.get(value[0], value[0])
                if other != node:
                    out.add((other, other))
            elif kind == "product":
                out.add(PACKAGES.get(value[1].lower(), (value[1], value[1])))
            else:
                sys.exit(f"check-architecture: {name}: cannot place the dependency {dep}")
    return edges


def section(text, start, end):
    begin = text.index(start)
    return text[begin:text.index(end, begin + len(start))]


def main():
    targets = {t["name"]: t for t in manifest()["targets"] if t["type"] not in ("test",)}
    edges = package_edges(targets)
    if "--edges" in sys.argv:
        for node in sorted(edges, key=str.lower):
            for other, _ in sorted(edges[node], key=lambda e: e[0].lower()):
                print(f"    {node} --> {other}")
        return

    text = open(DOC, encoding="utf-8").read()
    mermaid = section(text, "```mermaid", "\n```")
    drawn, nodes = set(), set()
    for line in mermaid.split("\n"):
        if match := re.match(r"\s*([A-Za-z_][\w-]*)\S*\s*-->\s*([A-Za-z_][\w-]*)", line):
            drawn.add((match.group(1), match.group(2)))
            nodes |= {match.group(1), match.group(2)}
        elif match := re.match(r"\s*([A-Za-z_][\w-]*)\[", line):
            nodes.add(match.group(1))

    problems = []
    # Every local target the shipped binaries and the app library reach, and the pure modules.
    node_edges = {n: {o for o, _ in e} for n, e in edges.items()}
    must, stack = set(PURE), list(ROOTS)
    while stack:
        node = stack.pop()
        if node in must and node not in ROOTS:
            continue
        must.add(node)
        stack += [o for o in node_edges.get(node, ()) if o in edges]
    for node in sorted(must - nodes, key=str.lower):
        problems.append(f"the diagram does not draw {node}, which Package.swift has "
                        f"(what {', '.join(sorted(n for n in must if node in node_edges.get(n, ())))} depends on)")
    for node in sorted(nodes - set(edges) - {p for p, _ in PACKAGES.values()}):
        problems.append(f"the diagram draws {node}, which is no target of Package.swift")
    truth = {(a, b) for a, out in node_edges.items() for b in out if a in nodes and b in nodes}
    for a, b in sorted(drawn - truth):
        problems.append(f"the diagram draws {a} --> {b}, which Package.swift does not have")
    for a, b in sorted(truth - drawn):
        problems.append(f"the diagram leaves out {a} --> {b}, which Package.swift has")

    table = section(text[text.index("The same graph as a table"):], "| module |", "\n\n")
    for line in table.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        modules = re.findall(r"`([^`]+)`", cells[0])
        lists = cells[2].split(";") if len(modules) > 1 else [cells[2]]
        if len(lists) != len(modules):
            problems.append(f"the table's row for {', '.join(modules)} needs one list per module, split by ';'")
            continue
        for module, listed in zip(modules, lists):
            listed = {n.strip() for n in listed.split(",") if n.strip() not in ("", "—")}
            actual = {name for _, name in edges.get(module, ())}
            if module not in edges:
                problems.append(f"the table has a row for {module}, which is no target of Package.swift")
            elif listed != actual:
                problems.append(f"the table says {module} depends on {sorted(listed) or 'nothing'}, "
                                f"Package.swift on {sorted(actual) or 'nothing'}")

    for problem in problems:
        print(f"check-architecture: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"architecture diagram: ok ({len(drawn)} edges, as Package.swift has them)")


main()

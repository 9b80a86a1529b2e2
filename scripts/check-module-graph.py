#!/usr/bin/env python3
"""Check the module graph of README § Architecture against Package.swift (`make test` runs it).

Run: python3 scripts/check-module-graph.py   (SWIFT=/path/to/swift to use another toolchain)

It reads the targets from `swift package dump-package` and the packages from `swift package
show-dependencies`, computes what each target reaches (its transitive closure), and fails when:
- a pure module reaches anything beyond what it is allowed (ONLY), or
- a target reaches something it must never link (NEVER): an app linking KioskClient gets no
  TOML, no YAML, no filter and no daemon model; kioskd and kioskctl never link Yams (the
  trace parsers are kioskctl-replay's, in kioskd-tools), or
- a source file of a local target that kioskd or kioskctl reaches imports Foundation rather than
  FoundationEssentials (`#if canImport(FoundationEssentials)` … `#else import Foundation`
  passes): Foundation links ICU's data, ~37 MB in each binary (docs/benchmarks.md, Footprint), or
- a source file of a pure module (PURE) imports anything but the modules it may reach and Swift's
  own (so no Glibc, Musl, Foundation, FoundationEssentials, Dispatch, Logging, SystemPackage nor
  any C module, i.e. a system library target of Package.swift), declares a C symbol of its own
  (`@_silgen_name`, `@_extern`), prints or reads the console (`print`, `readLine`), or reads a
  clock (CLOCK_READS): the pure modules take the time as a value, from the daemon through the
  clock seam (KioskCore's `KioskClock`, or a `now:` argument), never from a clock of their own.
A product of another package stands for that package and every package it depends on, so a
dependency that arrives through a third package is caught too.
"""
import json, os, re, subprocess, sys

# A pure module may reach exactly these (local targets, or other packages by identity). None of
# them reaches swift-system: only the edge modules (SystemdKit, LinuxInput, KioskStore) speak its
# Errno and FileDescriptor.
ONLY = {
    "KioskAPI": set(),
    "KioskInput": {"KioskAPI"},
    "KioskCore": {"KioskAPI", "KioskInput", "tomlkit"},
    "KioskTraces": {"KioskAPI", "KioskInput", "KioskCore", "tomlkit", "yams"},
    "BridgeCore": {"KioskAPI", "KioskInput", "KioskCore", "tomlkit"},
}
# What a pure module's source may import besides the local targets it may reach: Swift's own
# modules, and the modules of the packages in ONLY (by package identity).
SWIFT_MODULES = {"Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Synchronization"}
PACKAGE_MODULES = {"tomlkit": {"TOMLKit"}, "yams": {"Yams"}}
# Named in the message when a pure module imports one (anything else outside the list is
# refused too, as "not among what it may reach").
IMPURE_MODULES = {"Glibc", "Musl", "Bionic", "Darwin", "WinSDK", "ucrt", "Foundation", "FoundationEssentials",
                  "FoundationInternationalization", "Dispatch", "Logging", "SystemPackage", "System"}
# A clock read, as code (comments and string literals are left out): the standard library's
# clocks (`ContinuousClock.now`, `SuspendingClock().now`, their `sleep`), Foundation's and
# Dispatch's, and libc's.
CLOCK_READS = re.compile(
    r"\b(ContinuousClock|SuspendingClock|Date|DispatchTime|DispatchWallTime|ProcessInfo|CFAbsoluteTimeGetCurrent"
    r"|clock_gettime|clock_gettime_nsec_np|gettimeofday|mach_absolute_time|mach_continuous_time|timespec_get)\b"
    r"|\btime\s*\(\s*nil\s*\)|\bTask\s*\.\s*sleep\b")
# The standard library's own I/O, which needs no import: a pure module logs and prints nothing.
CONSOLE_IO = re.compile(r"(?<![\w.])(print|debugPrint|dump|readLine)\s*\(")
IMPORT = re.compile(r"^\s*(?:@[\w]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?"
                    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([\w]+)")
# What a target must never reach. KioskClient reaches swift-system through SystemdKit: allowed
# (small, pure Swift over libc; a failed connection's Errno is its type).
# GTK (CGtk) is kioskd-prompt's alone, in a package of its own: a kiosk without a display never
# gets it; and the display is a client like any app, with nothing of the daemon's. cairo (CCairo)
# is kioskctl-profile-png's alone, in kioskd-tools: kioskctl execs it for `profile show --png`.
NEVER = {
    "KioskClient": {"KioskCore", "KioskInput", "KioskTraces", "KioskStore", "KioskFiles", "LinuxInput", "KioskDaemon",
                    "tomlkit", "yams", "CGtk", "CCairo"},
    "kioskd": {"KioskTraces", "yams", "CGtk", "CCairo", "CMicroHTTPD"},
    "kioskctl": {"KioskTraces", "yams", "CGtk", "CCairo", "CMicroHTTPD"},
    "kioskd-multicall": {"KioskTraces", "yams", "CGtk", "CCairo", "CMicroHTTPD"},
    "kioskd-prompt": {"KioskCore", "KioskInput", "KioskTraces", "KioskStore", "KioskFiles", "LinuxInput", "KioskDaemon",
                      "tomlkit", "yams", "CCairo"},
    "kioskctl-profile-png": {"KioskTraces", "yams", "CGtk"},
    # The web bridge is a bus client like any app, in a package of its own: nothing of the
    # daemon's, no input, no GUI; libmicrohttpd (CMicroHTTPD) is its alone.
    "kioskd-bridge": {"KioskDaemon", "KioskStore", "LinuxInput", "KioskCrypt", "KioskTraces", "yams", "CGtk", "CCairo",
                      "CEvdev"},
}
# The pure modules: every decision, no I/O (README § Architecture, docs/architecture.md).
PURE = list(ONLY)
SHOW = ["KioskClient", "kioskd", "kioskctl", "kioskd-multicall", "kioskctl-replay", "kioskd-prompt",
        "kioskctl-profile-png", "kioskd-bridge"]
# What the kiosk's binaries are: no module they reach may import all of Foundation.
ESSENTIALS_ONLY = ["kioskd", "kioskctl", "kioskd-multicall", "kioskd-prompt", "kioskctl-profile-png", "kioskd-bridge"]


def swift_json(*args):
    swift = os.environ.get("SWIFT", "swift")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run([swift, "package", *args], cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check-module-graph: swift package {' '.join(args)} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def swift_files(root, target, name):
    directory = os.path.join(root, target.get("path") or os.path.join("Sources", name))
    for folder, _, files in os.walk(directory):
        for file in sorted(f for f in files if f.endswith(".swift")):
            yield os.path.join(folder, file)


def code_lines(path):
    """(line number, line) with comments and string literals blanked out."""
    text = open(path, encoding="utf-8").read()
    # Block comments (nesting is rare enough to ignore), then multi-line strings, then each
    # line's strings and line comment. Newlines are kept so that line numbers stay true.
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', blank, text)
    for number, line in enumerate(text.split("\n"), 1):
        line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        yield number, line.split("//")[0]


def purity_problems(root, targets, closure):
    problems = []
    system = {name for name, t in targets.items() if t["type"] == "system"}
    for name in PURE:
        target = targets.get(name)
        if target is None:
            continue
        reachable = closure(name)
        allowed = SWIFT_MODULES | {m for m in reachable if m in targets} | \
            {module for package in reachable for module in PACKAGE_MODULES.get(package, ())}
        for path in swift_files(root, target, name):
            where = os.path.relpath(path, root)
            for number, line in code_lines(path):
                if (match := IMPORT.match(line)) and (module := match.group(1)) not in allowed:
                    why = ("a C module (a system library target)" if module in system
                           else "not pure" if module in IMPURE_MODULES else "not among what it may reach")
                    problems.append(f"{name} is pure, but {where}:{number} imports {module}: {why}")
                if re.search(r"@_silgen_name|@_extern\b", line):
                    problems.append(f"{name} is pure, but {where}:{number} declares a C symbol: {line.strip()}")
                if match := CONSOLE_IO.search(line):
                    problems.append(f"{name} is pure, but {where}:{number} does I/O ({match.group(1)}): "
                                    f"return a value, the edge prints or logs it")
                if match := CLOCK_READS.search(line):
                    problems.append(f"{name} is pure, but {where}:{number} reads a clock ({match.group(0).strip()}): "
                                    f"take the time as a value (the clock seam, `KioskClock`)")
    return problems


def main():
    manifest = swift_json("dump-package")
    tree = swift_json("show-dependencies", "--format", "json")

    # Package-level edges: identity -> identities it depends on.
    packages = {}
    def walk(node):
        packages[node["identity"]] = {child["identity"] for child in node["dependencies"]}
        for child in node["dependencies"]:
            walk(child)
    for child in tree["dependencies"]:
        walk(child)

    targets = {t["name"]: t for t in manifest["targets"]}
    edges = {}
    for name, target in targets.items():
        out = set()
        for dep in target["dependencies"]:
            kind, value = next(iter(dep.items()))
            if kind in ("byName", "target") and value[0] in targets:
                out.add(value[0])
            elif kind == "product":
                out.add(value[1].lower())
            elif kind == "byName" and value[0].lower() in packages:
                out.add(value[0].lower())
            else:
                sys.exit(f"check-module-graph: {name}: cannot place the dependency {dep}")
        edges[name] = out
    for identity, deps in packages.items():
        edges[identity] = deps

    def closure(start):
        seen, stack = set(), [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    problems = []
    for name in [*ONLY, *NEVER, *SHOW]:
        if name not in targets:
            problems.append(f"{name}: no such target in Package.swift")
    for name, allowed in ONLY.items():
        if name in targets and (extra := closure(name) - allowed):
            problems.append(f"{name} is pure and may reach only {sorted(allowed) or 'nothing'}, "
                            f"but reaches {sorted(extra)}")
    for name, banned in NEVER.items():
        if name in targets and (bad := closure(name) & banned):
            problems.append(f"{name} must never reach {sorted(bad)}")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems += purity_problems(root, targets, closure)
    for name in ESSENTIALS_ONLY:
        for module in sorted({name} | closure(name)):
            target = targets.get(module)
            if target is None or target["type"] == "system":
                continue
            directory = os.path.join(root, target.get("path") or os.path.join("Sources", module))
            for folder, _, files in os.walk(directory):
                for file in sorted(f for f in files if f.endswith(".swift")):
                    path = os.path.join(folder, file)
                    previous = ""
                    for number, line in enumerate(open(path, encoding="utf-8"), 1):
                        stripped = line.strip()
                        if (stripped.split("//")[0].split() or [""])[-1:] == ["Foundation"] and \
                                stripped.startswith(("import", "@_exported import", "public import", "internal import")) \
                                and previous != "#else":
                            problems.append(f"{name} reaches {module}, whose {os.path.relpath(path, root)}:{number} "
                                            f"imports Foundation (ICU); import FoundationEssentials")
                        if stripped:
                            previous = stripped

    for name in SHOW:
        if name in targets:
            print(f"{name} reaches: {' '.join(sorted(closure(name), key=str.lower))}")
    if problems:
        for problem in problems:
            print(f"check-module-graph: {problem}", file=sys.stderr)
        sys.exit(1)
    print("module graph: ok")


main()

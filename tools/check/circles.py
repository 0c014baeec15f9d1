#!/usr/bin/env python3
"""No import circle in any crate: the check `make test` runs (ARCHITECTURE.md,
"Checks").

The rule. Module A depends on module B when a `crate::`, `super::` or
`self::` path outside test code in A names B or an item in B: `use` lines,
and inline paths such as `crate::map::FileTokens` alike. Comments and string
literals are not code and do not count. Dependencies are compared between
siblings, at every level: a module stands for itself and everything below
it, so `retrieve::vectors` naming `project` makes `retrieve` depend on
`project`. A child using its own ancestors does not count (that is a
module's own house), and neither does a parent using its children.

A circle is a strongly connected set of two or more siblings. The check
prints each circle with one path per edge that makes it, and exits 1.

    tools/check/circles.py                 every crate of this workspace
    tools/check/circles.py CRATE_SRC ...   those source folders (root: lib.rs or main.rs)
    tools/check/circles.py --self-test     the check on small crates it writes
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The workspace's crates: (name, source folder, root files). The app keeps
# its sources in src-tauri/src with a lib and a bin of its own.
def workspace_crates() -> list[tuple[str, Path, list[str]]]:
    crates = []
    for src in sorted((ROOT / "crates").glob("*/src")):
        crates.append((src.parent.name, src, ["lib.rs", "main.rs"]))
    crates.append(("loupe-app", ROOT / "src-tauri" / "src", ["lib.rs", "main.rs"]))
    return crates


# --- reading one file -------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_str>b?r(?P<hashes>\#*)")
  | (?P<str>b?"(?:\\.|[^"\\])*")
  | (?P<char>b?'(?:\\.|[^'\\\n])')
    """,
    re.VERBOSE | re.DOTALL,
)


def strip_comments_and_strings(text: str) -> str:
    """The code with comments and literals blanked (newlines kept, so line
    numbers still point at the source)."""
    out = []
    i = 0
    while True:
        m = _TOKEN.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i : m.start()])
        if m.group("block_comment"):
            depth, j = 1, m.end()
            while depth and j < len(text):
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end = j
        elif m.group("raw_str"):
            close = '"' + m.group("hashes")
            k = text.find(close, m.end())
            end = len(text) if k < 0 else k + len(close)
        else:
            end = m.end()
        out.append(re.sub(r"[^\n]", " ", text[m.start() : end]))
        i = end
    return "".join(out)


_CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")


def strip_test_code(code: str) -> tuple[str, list[str]]:
    """The code without `#[cfg(test)]` items, and the names of the
    `#[cfg(test)] mod NAME;` files it declares (test code as a whole)."""
    test_mods = []
    out = []
    i = 0
    while True:
        m = _CFG_TEST.search(code, i)
        if not m:
            out.append(code[i:])
            break
        out.append(code[i : m.start()])
        # The item the attribute is on: up to its `;` or its closing brace.
        j = m.end()
        decl = re.match(r"\s*(?:#\s*\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code[j:])
        if decl:
            test_mods.append(decl.group(1))
            end = j + decl.end()
        else:
            depth, k, opened = 0, j, False
            while k < len(code):
                c = code[k]
                if c == "{":
                    depth, opened = depth + 1, True
                elif c == "}":
                    depth -= 1
                    if opened and depth == 0:
                        k += 1
                        break
                elif c == ";" and not opened:
                    k += 1
                    break
                k += 1
            end = k
        out.append(re.sub(r"[^\n]", " ", code[m.start() : end]))
        i = end
    return "".join(out), test_mods


# --- paths in code ----------------------------------------------------------

_PATH_START = re.compile(r"(?<![\w:])(crate|super|self)(?=\s*::)")
_IDENT = re.compile(r"\s*::\s*(\w+|\{|\*)")


def _expand_group(code: str, pos: int) -> tuple[list[list[str]], int]:
    """Paths inside a `{ ... }` use group starting at code[pos] == '{'."""
    paths: list[list[str]] = []
    depth, k, item = 1, pos + 1, ""
    parts: list[str] = []
    while k < len(code) and depth:
        c = code[k]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and c == ",":
            parts.append(item)
            item = ""
        else:
            item += c
        k += 1
    parts.append(item)
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if "{" in part:
            head, _, rest = part.partition("{")
            prefix = [s for s in re.split(r"\s*::\s*", head.strip().rstrip(":").strip()) if s]
            sub, _ = _expand_group("{" + rest, 0)
            paths.extend(prefix + s for s in sub)
        else:
            segs = [s for s in re.split(r"\s*::\s*", part.split(" as ")[0].strip()) if s]
            paths.append(segs)
    return paths, k + 1


def paths_in(code: str) -> list[tuple[int, list[str]]]:
    """Every `crate::`/`super::`/`self::` path in the code, as (line, segments)."""
    found = []
    for m in _PATH_START.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        segs = [m.group(1)]
        k = m.end()
        while True:
            n = _IDENT.match(code, k)
            if not n:
                break
            tok = n.group(1)
            if tok == "{":
                for sub in _expand_group(code, n.end() - 1)[0]:
                    found.append((line, segs + sub))
                segs = []
                break
            if tok == "*":
                break
            segs.append(tok)
            k = n.end()
        if segs:
            found.append((line, segs))
    return found


# --- modules of a crate -----------------------------------------------------

def crate_modules(src: Path, roots: list[str]) -> dict[tuple[str, ...], Path]:
    """Module path -> file, for every .rs file below src reached from a root."""
    modules: dict[tuple[str, ...], Path] = {}
    for root in roots:
        if (src / root).is_file():
            modules.setdefault((), src / root)
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if rel.parts in [(r,) for r in roots]:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "mod":
            parts.pop()
        modules[tuple(parts)] = f
    return modules


def resolve(segs: list[str], here: tuple[str, ...], modules) -> tuple[str, ...] | None:
    """The deepest module a path names (None: outside the crate)."""
    if segs[0] == "crate":
        base: list[str] = []
        rest = segs[1:]
    else:
        base, rest = list(here), segs
    while rest and rest[0] in ("super", "self"):
        if rest[0] == "super":
            if not base:
                return None
            base.pop()
        rest = rest[1:]
    mod = base
    for s in rest:
        if tuple(mod + [s]) not in modules:
            break
        mod = mod + [s]
    return tuple(mod)


def dependencies(src: Path, roots: list[str]):
    """(from module, to module) -> first (file, line) that makes the edge."""
    modules = crate_modules(src, roots)
    test_files: set[tuple[str, ...]] = set()
    edges: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[Path, int]] = {}
    # Test-only files first, so their children are skipped too.
    stripped = {}
    for mod, f in sorted(modules.items(), key=lambda kv: len(kv[0])):
        code, test_mods = strip_test_code(strip_comments_and_strings(f.read_text(encoding="utf-8")))
        stripped[mod] = code
        for name in test_mods:
            test_files.add(mod + (name,))
    for mod, code in stripped.items():
        if any(mod[: len(t)] == t for t in test_files):
            continue
        for line, segs in paths_in(code):
            target = resolve(segs, mod, modules)
            if target is None or target == mod:
                continue
            edges.setdefault((mod, target), (modules[mod], line))
    return modules, edges


def sibling_circles(modules, edges):
    """Circles among siblings at every level: [(parent, [members], [edge evidence])]."""
    by_parent: dict[tuple[str, ...], dict] = defaultdict(lambda: defaultdict(dict))
    for (a, b), where in edges.items():
        # The deepest common ancestor, and the children of it on each side.
        n = 0
        while n < len(a) and n < len(b) and a[n] == b[n]:
            n += 1
        if n == len(a) or n == len(b):
            continue  # one is the other's ancestor
        parent = a[:n]
        sa, sb = a[n], b[n]
        by_parent[parent][sa].setdefault(sb, (a, b, where))
    circles = []
    for parent, graph in sorted(by_parent.items()):
        for comp in strongly_connected(graph):
            if len(comp) < 2:
                continue
            ev = [graph[x][y] for x in sorted(comp) for y in sorted(graph[x]) if y in comp]
            circles.append((parent, sorted(comp), ev))
    return circles


def strongly_connected(graph) -> list[set[str]]:
    nodes = set(graph) | {y for x in graph for y in graph[x]}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check(crates) -> list[str]:
    problems = []
    for name, src, roots in crates:
        modules, edges = dependencies(src, roots)
        for parent, members, ev in sibling_circles(modules, edges):
            where = "::".join(parent) or "crate root"
            lines = [f"{name}: circle under {where}: {' <-> '.join(members)}"]
            for a, b, (f, line) in ev:
                rel = f.relative_to(ROOT) if f.is_relative_to(ROOT) else f
                lines.append(f"    {'::'.join(a) or 'crate'} -> {'::'.join(b)}  ({rel}:{line})")
            problems.append("\n".join(lines))
    return problems


# --- the check's own test ---------------------------------------------------

def self_test() -> int:
    cases = {
        # name: (files, expect a circle)
        "use lines both ways": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "use crate::a::Y; pub struct X;"}, True),
        "an inline path counts": ({"lib.rs": "mod a; mod b;", "a.rs": "fn f() -> crate::b::X { todo!() }", "b.rs": "pub fn g() { crate::a::h() }"}, True),
        "a grouped use counts": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::{b::X, c};", "b.rs": "use super::a;"}, True),
        "through a grandchild": ({"lib.rs": "mod a; mod b;", "a.rs": "mod x;", "a/x.rs": "use crate::b::Z;", "b.rs": "use crate::a::x;"}, True),
        "nested siblings": ({"lib.rs": "mod c;", "c/mod.rs": "mod q; mod s;", "c/q.rs": "use super::s::A;", "c/s.rs": "use super::q::B;"}, True),
        "a child using its ancestor": ({"lib.rs": "mod a; pub struct R;", "a.rs": "mod x; pub struct T;", "a/x.rs": "use super::T; use crate::R;"}, False),
        "one way only": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "pub struct X;"}, False),
        "test code does not count": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "pub struct X;\n#[cfg(test)]\nmod tests {\n    use crate::a::*;\n    fn f() { let s = \"{\"; }\n}\n"}, False),
        "a test file does not count": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "#[cfg(test)]\nmod tests;", "b/tests.rs": "use crate::a::Y;"}, False),
        "comments and strings do not count": ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "/// see [`crate::a::Y`]\nconst S: &str = \"crate::a::Y\";\n// crate::a"}, False),
    }
    failed = 0
    for name, (files, expect) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "src"
            for rel, text in files.items():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_text(text)
            got = bool(check([("t", src, ["lib.rs", "main.rs"])]))
        ok = got == expect
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: circle {'found' if got else 'not found'}")
    # And the command itself exits 1 on a circle, 0 without.
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "src"
        src.mkdir()
        (src / "lib.rs").write_text("mod a; mod b;")
        (src / "a.rs").write_text("use crate::b::X;")
        (src / "b.rs").write_text("use crate::a::Y;")
        rc = subprocess.run([sys.executable, __file__, str(src)], capture_output=True).returncode
        failed += rc != 1
        print(f"{'ok  ' if rc == 1 else 'FAIL'} the command exits 1 on a circle (got {rc})")
    print(f"{len(cases) + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:]:
        crates = [(p, Path(p), ["lib.rs", "main.rs"]) for p in argv[1:]]
    else:
        crates = workspace_crates()
    problems = check(crates)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} import circle(s); the rule is in {Path(__file__).name}'s docstring")
        return 1
    print(f"no import circle in {len(crates)} crate(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

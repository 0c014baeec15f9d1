#!/usr/bin/env python3
"""No long function without a reason: the check `make test` runs on the
engine and the assembly crate (ARCHITECTURE.md, "Checks").

The rule. A function whose body spans more than LIMIT lines (from its `fn`
line to its closing brace), outside test code, carries a one-line reason
among the comments and attributes directly above it:

    /// What it does.
    // Long: one table of rules, read top to bottom.
    fn rules() -> Vec<Rule> { ... }

The reason says why the length helps the reader (a table, one linear pass
whose steps share too much state to pass around); a function that is long
for no such reason is split instead. Comments and string literals do not
count as braces; `#[cfg(test)]` items and test-only module files are left
out.

    tools/check/long_fns.py                the engine's and the assembly crate's sources
    tools/check/long_fns.py SRC ...        those source folders
    tools/check/long_fns.py --self-test    the check on small files it writes
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from circles import strip_comments_and_strings, strip_test_code  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 80
CRATES = ["crates/loupe-engine/src", "crates/loupe-assemble/src"]

_FN = re.compile(r"\bfn\s+(\w+)")
_REASON = re.compile(r"^\s*//\s*Long:\s*(\S.{9,})$")
_HEAD = re.compile(r"^\s*(//|#\[|#!\[|\*|/\*)")


def test_files(src: Path) -> set[Path]:
    """Files that are test modules as a whole (`#[cfg(test)] mod NAME;`)."""
    out = set()
    for path in src.rglob("*.rs"):
        code = strip_comments_and_strings(path.read_text(encoding="utf-8"))
        _, names = strip_test_code(code)
        here = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
        for name in names:
            out |= {here / f"{name}.rs", here / name / "mod.rs"}
    return out


def long_functions(path: Path) -> list[tuple[int, str, int]]:
    """(line, name, length) of each function over LIMIT lines without a
    reason."""
    text = path.read_text(encoding="utf-8")
    code, _ = strip_test_code(strip_comments_and_strings(text))
    lines = text.split("\n")
    found = []
    for m in _FN.finditer(code):
        # The body: the first `{` after the signature, unless a `;` ends it.
        j = m.end()
        depth = 0
        while j < len(code) and code[j] not in "{;":
            # Generic bounds and where clauses hold no braces; closures in
            # default arguments do not exist in Rust.
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        k = j
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        length = last - first + 1
        if length <= LIMIT:
            continue
        # The head: the comment and attribute lines right above, and the
        # signature's own line (a reason may sit at the end of neither).
        i = first - 2
        reasoned = False
        while i >= 0 and _HEAD.match(lines[i]):
            if _REASON.match(lines[i]):
                reasoned = True
            i -= 1
        if not reasoned:
            found.append((first, m.group(1), length))
    return found


def check(srcs: list[Path]) -> list[str]:
    problems = []
    for src in srcs:
        skip = test_files(src)
        for path in sorted(src.rglob("*.rs")):
            if path in skip:
                continue
            for line, name, length in long_functions(path):
                rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                problems.append(f"{rel}:{line}: fn {name} is {length} lines (over {LIMIT}) with no `// Long: reason` above it")
    return problems


def self_test() -> int:
    long_body = "\n".join(f"    let x{i} = {i};" for i in range(LIMIT))
    cases = {
        "short.rs": ("fn short() {\n    let a = 1;\n}\n", []),
        "long.rs": (f"/// Docs.\nfn long() {{\n{long_body}\n}}\n", ["long"]),
        "reasoned.rs": (
            f"/// Docs.\n// Long: one table, read top to bottom.\n#[inline]\nfn reasoned() {{\n{long_body}\n}}\n",
            [],
        ),
        "empty_reason.rs": (f"// Long:\nfn empty_reason() {{\n{long_body}\n}}\n", ["empty_reason"]),
        "far_reason.rs": (
            f"// Long: a reason for something else entirely.\n\nfn far_reason() {{\n{long_body}\n}}\n",
            ["far_reason"],
        ),
        "in_tests.rs": (f"#[cfg(test)]\nmod tests {{\n    fn t() {{\n{long_body}\n    }}\n}}\n", []),
        "braces_in_strings.rs": (
            'fn strings() {\n    let s = "}}}";\n    // }\n    let c = \'}\';\n}\n' + f"fn after() {{\n{long_body}\n}}\n",
            ["after"],
        ),
        "declaration.rs": ("trait T {\n    fn f(&self);\n}\n", []),
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (source, want) in cases.items():
            path = Path(tmp) / name
            path.write_text(source, encoding="utf-8")
            got = [n for _, n, _ in long_functions(path)]
            if got != want:
                print(f"self-test {name}: want {want}, got {got}")
                failures += 1
        # A test module in its own file is left out as a whole.
        src = Path(tmp) / "crate"
        (src / "m").mkdir(parents=True)
        (src / "lib.rs").write_text("mod m;\n", encoding="utf-8")
        (src / "m.rs").write_text("#[cfg(test)]\nmod tests;\n", encoding="utf-8")
        (src / "m" / "tests.rs").write_text(f"fn t() {{\n{long_body}\n}}\n", encoding="utf-8")
        if check([src]):
            print("self-test test file: flagged")
            failures += 1
    print(f"self-test: {len(cases) + 1 - failures} of {len(cases) + 1} cases pass")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    srcs = [Path(a).resolve() for a in argv[1:]] or [ROOT / c for c in CRATES]
    problems = check(srcs)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} long function(s) without a reason: split them or say why at their head")
        return 1
    print(f"no long function without a reason in {len(srcs)} crate(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

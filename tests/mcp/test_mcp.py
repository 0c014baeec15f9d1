"""`loupe mcp` driven by the official MCP Python SDK's stdio client.

Each test starts the real `loupe` binary (LOUPE_BIN, default
target/debug/loupe) on a small Rust + Python project made in a temp dir,
with its own data dir and no embedder (lexical, symbol and graph signals:
fast and deterministic on two cores), and talks to it as an agent would.

Run: `make mcp-test`, or `target/mcp-venv/bin/pytest tests/mcp` after it
installed the pinned SDK.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

REPO = Path(__file__).resolve().parents[2]
LOUPE = Path(os.environ.get("LOUPE_BIN", REPO / "target" / "debug" / "loupe"))
INVALID_PARAMS = -32602
# Generous: a cold start on a loaded two-core machine.
CALL_TIMEOUT = 60.0

pytestmark = pytest.mark.timeout(180)


TOKENS_RS = '''\
//! Token counting for prompts.

/// Counts the tokens of `text` by splitting on whitespace and punctuation.
pub fn count_tokens(text: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if !in_word {
                count += 1;
                in_word = true;
            }
        } else {
            in_word = false;
            if !ch.is_whitespace() {
                count += 1;
            }
        }
    }
    count
}

/// Whether `text` fits in `budget` tokens.
pub fn fits_budget(text: &str, budget: usize) -> bool {
    count_tokens(text) <= budget
}
'''

LEDGER_RS = '''\
//! The invoice ledger.

/// One line of an invoice.
pub struct InvoiceLine {
    pub amount_cents: i64,
    pub quantity: u32,
}

/// The total of an invoice in cents, tax included.
pub fn invoice_total(lines: &[InvoiceLine], tax_percent: i64) -> i64 {
    let net: i64 = lines
        .iter()
        .map(|l| l.amount_cents * i64::from(l.quantity))
        .sum();
    net + net * tax_percent / 100
}
'''


def big_rust_module() -> str:
    """Twelve long, similar functions: more than a tiny budget can hold."""
    out = ["//! Shipping rates per zone.\n"]
    for n in range(12):
        body = "\n".join(
            f"    let step_{i} = weight_grams * {i + n} / (zone + {i + 1});" for i in range(30)
        )
        total = " + ".join(f"step_{i}" for i in range(30))
        out.append(
            f"/// Shipping rate for zone {n}: weight times the zone factor.\n"
            f"pub fn shipping_rate_zone_{n}(weight_grams: u64, zone: u64) -> u64 {{\n"
            f"{body}\n    {total}\n}}\n"
        )
    return "\n".join(out)


REPORT_PY = '''\
"""Rendering of ledger reports."""


class ReportWriter:
    """Writes a ledger report as plain text."""

    def __init__(self, title):
        self.title = title
        self.rows = []

    def add_row(self, name, cents):
        """Adds one row of the report."""
        self.rows.append((name, cents))

    def render_report(self):
        """Renders the report with a header and a total line."""
        lines = [self.title, "=" * len(self.title)]
        for name, cents in self.rows:
            lines.append(f"{name:<20} {cents / 100:>10.2f}")
        total = sum(c for _, c in self.rows)
        lines.append(f"{'total':<20} {total / 100:>10.2f}")
        return "\\n".join(lines)
'''

HELPERS_PY = '''\
"""Small helpers."""


def slugify(title):
    """Lower-cases a title and joins its words with dashes."""
    return "-".join(title.lower().split())
'''


def make_project(root: Path) -> Path:
    files = {
        "src/lib.rs": "pub mod ledger;\npub mod shipping;\npub mod tokens;\n",
        "src/tokens.rs": TOKENS_RS,
        "src/ledger.rs": LEDGER_RS,
        "src/shipping.rs": big_rust_module(),
        "tools/report.py": REPORT_PY,
        "tools/helpers.py": HELPERS_PY,
        "README.md": "# Ledger\n\nInvoices, shipping rates and token counting.\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture()
def workspace():
    with tempfile.TemporaryDirectory(prefix="loupe-mcp-") as tmp:
        tmp = Path(tmp)
        project = make_project(tmp / "proj")
        data = tmp / "data"
        yield tmp, project, data


def loupe_args(data: Path, *rest: str, embedder: tuple[str, ...] = ("--embedder", "none")) -> list[str]:
    return ["--data-dir", str(data), *embedder, "--no-history", *rest]


@asynccontextmanager
async def server(data: Path, project: Path, *extra: str, log: Path, embedder: tuple[str, ...] = ("--embedder", "none")):
    params = StdioServerParameters(
        command=str(LOUPE),
        args=loupe_args(data, "mcp", str(project), *extra, embedder=embedder),
        env={"LOUPE_LOG": "warn"},
    )
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                await session.initialize()
                yield session


def run(test, workspace, *extra: str):
    """Runs `test(session, project, data)` against a fresh server; shows its
    stderr when the test fails."""
    tmp, project, data = workspace
    log = tmp / "server.log"

    async def main():
        async with server(data, project, *extra, log=log) as session:
            await test(session, project, data)

    try:
        anyio.run(main)
    except BaseException:
        if log.exists():
            sys.stderr.write("--- server stderr ---\n" + log.read_text())
        raise
    return log.read_text()


async def call(session: ClientSession, tool: str, **args):
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool} failed: {result.content}"
    return result


async def structured(session: ClientSession, tool: str, **args) -> dict:
    result = await call(session, tool, **args)
    assert result.structured_content is not None
    # The text block carries the same JSON, for clients without structured output.
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def context(session: ClientSession, **args) -> tuple[str, dict]:
    result = await call(session, "context", **args)
    assert len(result.content) == 2
    prompt, report = result.content[0].text, json.loads(result.content[1].text)
    assert report == result.structured_content
    return prompt, report


async def expect_invalid(session: ClientSession, tool: str, args: dict, *words: str):
    with pytest.raises(MCPError) as err:
        await session.call_tool(tool, args)
    assert err.value.code == INVALID_PARAMS, err.value.message
    for w in words:
        assert w in err.value.message, err.value.message


def test_binary_is_built():
    assert LOUPE.is_file(), f"build {LOUPE} first (make mcp-test does)"


def test_lists_four_tools_each_with_schemas(workspace):
    async def body(session, project, data):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert sorted(tools) == ["context", "explain", "search", "status"]
        for name, tool in tools.items():
            assert tool.input_schema["type"] == "object", name
            assert len(tool.description) > 80, name
            assert tool.output_schema is not None, name
            for prop, schema in tool.input_schema.get("properties", {}).items():
                assert "description" in schema or "$ref" in schema, f"{name}.{prop}"
        assert tools["context"].input_schema["required"] == ["question"]
        assert set(tools["explain"].input_schema["required"]) == {"question", "target"}
        props = tools["context"].input_schema["properties"]
        for knob in ["budget", "model", "format", "path_weights", "pins", "bans", "project"]:
            assert knob in props, knob

    log = run(body, workspace)
    assert "serving" in log


def test_status_says_what_is_indexed(workspace):
    async def body(session, project, data):
        s = await structured(session, "status")
        assert s["files"] == 7
        assert s["chunks"] >= 7
        assert s["generation"] >= 1
        assert s["watching"] is True
        assert s["lexical"]["ready"] is True
        assert s["vectors"]["ready"] is False and "off" in s["vectors"]["detail"]
        assert s["history"]["ready"] is False
        assert Path(s["root"]) == project.resolve()

    run(body, workspace)


def test_context_gives_a_prompt_and_a_bounded_report(workspace):
    async def body(session, project, data):
        prompt, report = await context(session, question="How are tokens counted in count_tokens?")
        assert "pub fn count_tokens" in prompt
        assert report["budget"] == 16000
        assert 0 < report["used"] <= report["budget"]
        assert report["included"] >= 1
        assert len(report["top_included"]) <= 10 and len(report["top_dropped"]) <= 5
        top = report["top_included"][0]
        assert top["chunk"].startswith("src/tokens.rs:")
        assert 0 < top["score"] <= 1 and top["lod"] in range(6)

        # The same question in Markdown, for another model, under a budget.
        prompt, report = await context(
            session,
            question="How are tokens counted in count_tokens?",
            format="markdown",
            model="gpt-4",
            budget=2000,
        )
        assert "```" in prompt and "<documents>" not in prompt
        assert report["budget"] == 2000 and report["used"] <= 2000
        assert report["model"] == "gpt-4"

    run(body, workspace)


def test_pins_bans_and_path_weights_shape_the_prompt(workspace):
    async def body(session, project, data):
        question = "How is the invoice total computed with tax?"
        prompt, _ = await context(session, question=question)
        assert "invoice_total" in prompt
        assert "def slugify" not in prompt

        # Pin a file and a symbol retrieval would not bring; ban the obvious one.
        prompt, report = await context(
            session,
            question=question,
            pins=["tools/helpers.py", "count_tokens"],
            bans=["ledger.rs"],
        )
        assert "def slugify" in prompt
        assert "pub fn count_tokens" in prompt
        assert "invoice_total(lines" not in prompt
        explained = await structured(
            session, "explain", question=question, target="src/ledger.rs", bans=["ledger.rs"]
        )
        assert explained["verdict"] == "banned", explained

        # A folder (trailing `/`) bans every file under it; pinned, every
        # file under it is in; explain takes files and symbols only.
        prompt, _ = await context(session, question=question, bans=["src/"])
        assert "@src/" not in prompt, prompt
        prompt, _ = await context(session, question="nothing in particular", pins=["tools/"], budget=8000)
        assert "@tools/helpers.py" in prompt and "@tools/report.py" in prompt, prompt
        await expect_invalid(session, "context", {"question": question, "bans": ["nowhere/"]}, "nowhere/")
        await expect_invalid(session, "explain", {"question": question, "target": "tools/"}, "folder")

        # Weight 0 hides a folder.
        prompt, report = await context(
            session,
            question="render the ledger report rows",
            path_weights=[{"glob": "tools/**", "weight": 0}],
        )
        assert "tools/report.py" not in prompt
        hidden = [r for r in report["top_dropped"] if "path weight" in r.get("reason", "")]
        assert hidden, report

    run(body, workspace)


def test_search_ranks_candidates_with_their_breakdown(workspace):
    async def body(session, project, data):
        s = await structured(session, "search", question="shipping rate for a zone", limit=3)
        rows = s["rows"]
        assert 1 <= len(rows) <= 3 <= s["candidates"]
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
        assert rows[0]["path"] == "src/shipping.rs"
        scores = [r["score"] for r in rows]
        assert scores == sorted(scores, reverse=True)
        for r in rows:
            assert {"lexical", "vector", "symbol", "score", "relevance"} <= set(r["breakdown"])
            assert r["breakdown"]["score"] == pytest.approx(r["score"])
        s = await structured(session, "search", question="shipping rate for a zone")
        assert len(s["rows"]) <= 20

    run(body, workspace)


def test_explain_says_where_a_target_is_or_why_not(workspace):
    async def body(session, project, data):
        q = "How are tokens counted in count_tokens?"
        found = await structured(session, "explain", question=q, target="src/tokens.rs")
        assert found["verdict"] == "in_prompt", found
        assert found["rank"] >= 1 and found["lod"] in range(6)
        assert found["chunk"].startswith("src/tokens.rs:")

        symbol = await structured(session, "explain", question=q, target="count_tokens")
        assert symbol["kind"] == "symbol" and symbol["verdict"] == "in_prompt"

        unknown = await structured(session, "explain", question=q, target="count_tokenz")
        assert unknown["verdict"] == "unknown"
        assert unknown["suggestions"] == ["count_tokens"]

        missing = await structured(session, "explain", question=q, target="tools/helpers.py")
        assert missing["verdict"] in ("not_retrieved", "dropped"), missing

        # Under a tiny budget the big module is retrieved but cannot fit whole.
        tiny = await structured(
            session, "explain", question="shipping rate zone 7", target="src/shipping.rs", budget=256
        )
        assert tiny["verdict"] in ("in_prompt", "dropped"), tiny
        assert tiny["verdict"] == "dropped" or tiny["lod"] > 0 or tiny["chunks_in_prompt"] < tiny["chunks_retrieved"]

    run(body, workspace)


def test_bad_arguments_are_mcp_errors_and_the_server_keeps_serving(workspace):
    async def body(session, project, data):
        await expect_invalid(session, "context", {}, "question")
        await expect_invalid(session, "context", {"question": "   "}, "empty")
        await expect_invalid(session, "context", {"question": "q", "budget": 5}, "budget", "100")
        await expect_invalid(session, "context", {"question": "q", "budget": 10_000_000}, "context window")
        await expect_invalid(session, "context", {"question": "q", "budget": "big"}, "budget")
        await expect_invalid(session, "context", {"question": "q", "budjet": 300}, "budjet")
        await expect_invalid(session, "context", {"question": "q", "format": "html"}, "html")
        await expect_invalid(
            session, "context", {"question": "q", "path_weights": [{"glob": "src/**", "weight": 7}]}, "between 0 and 2"
        )
        await expect_invalid(session, "context", {"question": "q", "pins": ["no_such_thing_at_all"]}, "pins")
        await expect_invalid(session, "context", {"question": "q @missing/file.rs"}, "missing/file.rs")
        await expect_invalid(session, "search", {"question": "q", "limit": 0}, "limit")
        await expect_invalid(session, "search", {"question": "q", "limit": 1000}, "limit")
        await expect_invalid(session, "explain", {"question": "q"}, "target")
        await expect_invalid(session, "status", {"project": "/"}, "outside")
        await expect_invalid(session, "status", {"project": str(project / "nope")}, "project")
        with pytest.raises(MCPError):
            await session.call_tool("no_such_tool", {})
        # Still serving, with the same answers as before.
        s = await structured(session, "status")
        assert s["files"] == 7
        prompt, _ = await context(session, question="invoice total")
        assert "invoice_total" in prompt

    run(body, workspace)


def test_a_budget_that_fits_nothing(workspace):
    async def body(session, project, data):
        # A small budget: the report says what did not fit, and the cap holds.
        prompt, report = await context(session, question="shipping rate for zone 3", budget=256)
        assert report["used"] <= 256
        assert report["truncated"] is True
        assert report["dropped"] >= 1 and report["top_dropped"]
        assert all(r.get("reason") for r in report["top_dropped"])
        # A question that alone outgrows the budget: a tool error that says so.
        long_question = "Why is the shipping rate wrong? " + " ".join(f"detail{i}" for i in range(400))
        result = await session.call_tool("context", {"question": long_question, "budget": 256})
        assert result.is_error
        assert "over the budget of 256" in result.content[0].text
        # And the server answers the next call.
        s = await structured(session, "status")
        assert s["chunks"] > 0

    run(body, workspace)


def loupe_cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LOUPE), *loupe_args(data, *args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_another_process_reads_while_the_server_runs_and_watches(workspace):
    async def body(session, project, data):
        before = (await structured(session, "status"))["generation"]

        # A CLI query beside the server, concurrently with the server's own answer.
        async def cli_query():
            return await anyio.to_thread.run_sync(
                lambda: loupe_cli(data, "query", str(project), "How is the invoice total computed?")
            )

        results = {}

        async def server_call():
            results["server"] = await context(session, question="How is the invoice total computed?")

        async def cli_call():
            results["cli"] = await cli_query()

        async with anyio.create_task_group() as tg:
            tg.start_soon(server_call)
            tg.start_soon(cli_call)
        cli = results["cli"]
        assert cli.returncode == 0, cli.stderr
        assert "invoice_total" in cli.stdout
        assert "invoice_total" in results["server"][0]

        # An edit: the watcher re-indexes while another process queries.
        # Written whole, then renamed in (as editors save): the watcher
        # must not catch the file created but still empty.
        staged = project.parent / "zebra.rs.partial"
        staged.write_text(
            "/// Paints zebra stripes on the invoice header.\npub fn paint_zebra_stripes(width: u32) -> u32 {\n    width / 2\n}\n"
        )
        os.replace(staged, project / "src" / "zebra.rs")
        during = await cli_query()
        assert during.returncode == 0, during.stderr

        deadline = time.monotonic() + 60
        while True:
            s = await structured(session, "status")
            if s["generation"] > before and s["files"] == 8:
                break
            assert time.monotonic() < deadline, f"the watcher did not re-index: {s}"
            await anyio.sleep(0.3)
        prompt, _ = await context(session, question="paint zebra stripes")
        assert "paint_zebra_stripes" in prompt

        # And the CLI sees what the server indexed.
        after = loupe_cli(data, "query", str(project), "paint zebra stripes")
        assert after.returncode == 0, after.stderr
        assert "paint_zebra_stripes" in after.stdout

    log = run(body, workspace)
    assert "re-indexed" in log


def test_allowed_roots_let_a_call_name_another_project(workspace):
    tmp, project, data = workspace
    other = tmp / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "greet.py").write_text('def greet(name):\n    """Says hello."""\n    return "hello " + name\n')
    outside = Path(tempfile.mkdtemp(prefix="loupe-outside-"))

    async def body(session, project_dir, data_dir):
        s = await structured(session, "status", project=str(other))
        assert s["files"] == 1 and Path(s["root"]) == other.resolve()
        prompt, _ = await context(session, question="how do we greet someone", project=str(other))
        assert "def greet" in prompt
        # The first project is still the default.
        assert (await structured(session, "status"))["files"] == 7
        await expect_invalid(session, "status", {"project": str(outside)}, "outside", "--allow-root")

    try:
        run(body, workspace, "--allow-root", str(tmp))
    finally:
        outside.rmdir()


def test_watch_server_and_cli_write_and_read_one_project_at_once(workspace):
    """`loupe watch`, the MCP server (which watches too), `loupe index` and
    `loupe query`, as separate processes on one project during a storm of
    edits: none errors, writes take turns through the lock, and every
    process ends with the index a fresh one of the final tree gives."""
    tmp, project, data = workspace
    watch_log = tmp / "watch.log"
    with open(watch_log, "w") as out:
        watcher = subprocess.Popen(
            [str(LOUPE), *loupe_args(data, "watch", str(project))],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "LOUPE_LOG": "warn"},
        )
    try:
        deadline = time.monotonic() + CALL_TIMEOUT
        while "watching" not in watch_log.read_text():
            assert watcher.poll() is None, watch_log.read_text()
            assert time.monotonic() < deadline, "loupe watch did not start"
            time.sleep(0.1)

        async def body(session, project, data):
            cli_runs = []

            def storm():
                for n in range(120):
                    (project / "src" / "storm").mkdir(exist_ok=True)
                    (project / "src" / "storm" / f"s{n}.rs").write_text(
                        f"/// Storm module {n}.\npub fn storm_cell_{n}(x: u64) -> u64 {{\n    x * {n} + 1\n}}\n"
                    )
                    if n % 10 == 0:
                        # Saved whole, by a rename, as editors save: a
                        # truncate-and-write could be read half-written,
                        # and an index of that moment rightly has no
                        # invoice_total for the calls below to find.
                        staged = tmp / "ledger.rs.next"
                        staged.write_text(LEDGER_RS + f"\n/// Revision {n}.\npub const LEDGER_REVISION: u32 = {n};\n")
                        os.replace(staged, project / "src" / "ledger.rs")
                    time.sleep(0.01)

            def cli(*args):
                cli_runs.append(loupe_cli(data, *args))

            async def server_calls():
                for _ in range(6):
                    prompt, _ = await context(session, question="How is the invoice total computed?")
                    assert "invoice_total" in prompt
                    await structured(session, "status")
                    await anyio.sleep(0.2)

            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, storm)
                tg.start_soon(server_calls)
                for args in [
                    ("index", str(project)),
                    ("query", str(project), "How is the invoice total computed?"),
                    ("index", str(project)),
                    ("query", str(project), "storm cell"),
                ]:
                    tg.start_soon(anyio.to_thread.run_sync, lambda a=args: cli(*a))

            for r in cli_runs:
                assert r.returncode == 0, r.stderr
                assert "error" not in r.stderr.lower(), r.stderr

            # What a fresh index of the final tree holds.
            fresh = loupe_cli(tmp / "fresh-data", "index", str(project), "--json")
            assert fresh.returncode == 0, fresh.stderr
            want = json.loads(fresh.stdout)
            want_status = json.loads(loupe_cli(tmp / "fresh-data", "status", str(project), "--json").stdout)["status"]
            assert want_status["files"] == 127

            deadline = time.monotonic() + 90
            while True:
                s = await structured(session, "status")
                cli_status = json.loads(loupe_cli(data, "status", str(project), "--json").stdout)["status"]
                same = all(
                    x["files"] == want_status["files"] and x["chunks"] == want_status["chunks"]
                    for x in (s, cli_status)
                )
                if same:
                    break
                assert time.monotonic() < deadline, f"never equal to a fresh index: {s} {cli_status} {want}"
                await anyio.sleep(0.5)

            prompt, _ = await context(session, question="storm_cell_119")
            assert "x * 119 + 1" in prompt
            last = loupe_cli(data, "query", str(project), "storm_cell_119")
            assert last.returncode == 0, last.stderr
            assert "x * 119 + 1" in last.stdout

        log = run(body, workspace)
        assert "error" not in log.lower(), log
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    text = watch_log.read_text()
    assert "error" not in text.lower(), text


def test_context_reviews_a_change(workspace):
    tmp, project, data = workspace
    git = lambda *a: subprocess.run(
        ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *a],
        check=True,
        capture_output=True,
    )
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "ledger")
    ledger = project / "src" / "ledger.rs"
    ledger.write_text(LEDGER_RS.replace("net + net * tax_percent / 100", "net + (net * tax_percent).max(0) / 100"))

    async def body(session, project, data):
        prompt, report = await context(session, question="", diff="unstaged")
        assert "You are reviewing a change" in prompt
        assert "+    net + (net * tax_percent).max(0) / 100" in prompt
        assert "@src/ledger.rs:" in prompt
        # The same change as the new code with its changed line marked.
        prompt, _ = await context(session, question="", diff="unstaged", diff_as_code=True)
        assert "as the new code with numbered lines" in prompt
        assert "+    net + (net * tax_percent).max(0) / 100" not in prompt
        assert re.search(r"^\+ +\d+ \|     net \+ \(net \* tax_percent\)\.max\(0\) / 100$", prompt, re.M), prompt
        await expect_invalid(session, "context", {"question": "q", "diff_as_code": True}, "`diff_as_code`", "`diff`")
        await expect_invalid(session, "context", {"question": "q", "diff": "HEAD"}, "`diff`", "BASE..HEAD")
        # Nothing staged: refused in words, and the server goes on.
        await expect_invalid(session, "context", {"question": "", "diff": "staged"}, "no staged changes")
        await structured(session, "status")

    run(body, workspace)


def agent_log(data: Path) -> list[dict]:
    """The entries of the agent log `loupe mcp` writes for the app."""
    logs = list(data.glob("projects/*/agent-requests.jsonl"))
    assert len(logs) == 1, logs
    return [json.loads(line) for line in logs[0].read_text().splitlines() if line.strip()]


def test_calls_are_recorded_for_the_app_and_knobs_saved_for_agents_apply(workspace):
    async def body(session, project, data):
        question = "How is the invoice total computed with tax?"
        prompt, report = await context(session, question=question, budget=3000, bans=["src/tokens.rs"])
        await structured(session, "search", question="count tokens")
        entries = agent_log(data)
        assert [e["tool"] for e in entries] == ["context", "search"]
        first = entries[0]
        # The official SDK's client says who it is in the handshake.
        assert first["client"] and first["client"].startswith("mcp")
        assert first["question"] == question
        assert first["knobs"]["budget"] == {"tokens": 3000}
        # The clock recency was measured against, so the app can ask again at it.
        assert abs(first["knobs"]["now"] - time.time()) < 600
        assert first["selection"]["banned"] == [{"kind": "file", "path": "src/tokens.rs"}]
        assert first["report"]["used"] == report["used"] <= 3000
        assert first["report"]["prompt_bytes"] == len(prompt.encode())
        assert 0 < len(first["items"]) <= 40
        assert "text" not in json.dumps(first["items"]), "the prompt's text is not kept"

        # What the app's "Save these knobs for agents" writes: the next call starts from it.
        (data.glob("projects/*").__next__() / "agent-knobs.json").write_text(
            json.dumps({"path_weights": [{"glob": "src/ledger.rs", "weight": 0.0}], "min_score": 7})
        )
        status = await structured(session, "status")
        assert status["agent_knobs"] == {"path_weights": [{"glob": "src/ledger.rs", "weight": 0.0}]}
        prompt, _ = await context(session, question=question)
        assert "invoice_total(lines" not in prompt
        assert agent_log(data)[-1]["knobs"]["path_weights"] == [{"glob": "src/ledger.rs", "weight": 0.0}]

    log = run(body, workspace)
    # The out-of-range knob is a warning, not a failure.
    assert "agent-knobs.json" in log and "min_score" in log


class HeldEmbeddings:
    """An OpenAI-compatible `/v1/embeddings` endpoint on loopback whose
    answers can be held back, as a slow model server's are: vectors are a
    bag of hashed words."""

    DIM = 16

    def __init__(self):
        import http.server
        import threading

        self.gate = threading.Event()
        self.gate.set()
        self.held = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not outer.gate.is_set() and body["input"] != ["dimension probe"]:
                    outer.held += 1
                    outer.gate.wait(60)
                data = [{"embedding": outer.vector(t), "index": i} for i, t in enumerate(body["input"])]
                reply = json.dumps({"data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def vector(self, text: str) -> list[float]:
        v = [0.0] * self.DIM
        for word in re.findall(r"[a-z0-9_]+", text.lower()):
            v[sum(word.encode()) % self.DIM] += 1.0
        v[0] += 0.01
        return v

    def close(self):
        self.gate.set()
        self.server.shutdown()


def test_a_call_before_the_vectors_land_says_the_index_is_partial(workspace):
    tmp, project, data = workspace
    stub = HeldEmbeddings()
    embedder = ("--embedder", "http", "--embed-url", stub.url, "--embed-model", "stub")
    question = "How are tokens counted in count_tokens?"

    async def main():
        # The index run's batches wait (the server's dimension probe does not).
        stub.gate.clear()
        async with server(data, project, log=tmp / "server.log", embedder=embedder) as session:
            # Serving while the first run waits on the embedder.
            deadline = time.monotonic() + 60
            while stub.held == 0:
                assert time.monotonic() < deadline, "the run never asked for vectors"
                await anyio.sleep(0.02)
            prompt, report = await context(session, question=question)
            assert "pub fn count_tokens" in prompt
            assert any("partial index" in w for w in report["warnings"]), report["warnings"]
            assert (await structured(session, "status"))["vectors"]["ready"] is False
            # They land: the next call has them.
            stub.gate.set()
            while not (await structured(session, "status"))["vectors"]["ready"]:
                assert time.monotonic() < deadline, "the vectors did not land"
                await anyio.sleep(0.1)
            prompt, report = await context(session, question=question)
            assert "pub fn count_tokens" in prompt
            assert not any("partial index" in w for w in report.get("warnings", [])), report

    try:
        anyio.run(main)
    except BaseException:
        log = tmp / "server.log"
        if log.exists():
            sys.stderr.write("--- server stderr ---\n" + log.read_text())
        raise
    finally:
        stub.close()

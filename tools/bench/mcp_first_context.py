#!/usr/bin/env python3
"""An agent's sandbox, timed: start `loupe mcp FOLDER` (fresh data dir),
wait until its start-up index run has every signal (its "indexed" line on
stderr), then make one `context` call over stdio; print the seconds from
the spawn to the index line and to the call's answer, as JSON.

Raw JSON-RPC over stdio (MCP's stdio transport), so the benchmark needs
nothing but the binary. Usage:
  mcp_first_context.py LOUPE FOLDER DATA_DIR "QUESTION" [LOUPE GLOBAL ARGS...]
"""

import json
import subprocess
import sys
import threading
import time


def main() -> int:
    loupe, folder, data, question, *extra = sys.argv[1:]
    start = time.monotonic()
    proc = subprocess.Popen(
        [loupe, "--data-dir", data, "--no-history", *extra, "mcp", folder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    indexed = threading.Event()
    lines = []

    def read_stderr() -> None:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("loupe mcp: indexed "):
                indexed.set()

    threading.Thread(target=read_stderr, daemon=True).start()

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(id_: int) -> dict:
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("id") == id_:
                return message
        raise SystemExit("the server closed its output: " + "".join(lines[-5:]))

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if not indexed.wait(timeout=1800):
        raise SystemExit("no index line: " + "".join(lines[-5:]))
    ready = time.monotonic() - start
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "context", "arguments": {"question": question}}})
    reply = answer(2)
    answered = time.monotonic() - start
    proc.stdin.close()
    proc.wait(timeout=60)
    failed = reply.get("error") or reply.get("result", {}).get("isError")
    print(json.dumps({"ready_s": round(ready, 2), "answered_s": round(answered, 2),
                      "failed": bool(failed), "index_line": next(
                          (l.strip() for l in lines if l.startswith("loupe mcp: indexed ")), None)}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

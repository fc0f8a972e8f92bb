#!/usr/bin/env bash
# The official MCP conformance suite against cat-code's client (tests/conformance/client.py).
#
# Installs Node 22 and @modelcontextprotocol/conformance@0.1.16 from npm into tools/conformance
# (0.1.16 does not start on Node 20; see docs/conformance.md §1) unless already there, runs the
# four core client scenarios one by one (sse-retry is timing-sensitive), and fails on any
# FAILURE or WARNING, on a scenario that recorded no check at all (the harness passes a client
# that never connects for `initialize`), or on a missing expected SUCCESS check.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=tools/conformance
HARNESS_VERSION=0.1.16
NODE_MAJOR=22
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${CONFORMANCE_OUT:-conformance-results}
CLIENT=${CONFORMANCE_CLIENT:-tests/conformance/client.py}
SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)

bin="$PREFIX/node_modules/.bin"
installed_harness() {
  "$bin/node" -p "require('./$PREFIX/node_modules/@modelcontextprotocol/conformance/package.json').version" 2>/dev/null || true
}
installed_node() { "$bin/node" --version 2>/dev/null || true; }

if [[ "$(installed_node)" != v${NODE_MAJOR}.* || "$(installed_harness)" != "$HARNESS_VERSION" ]]; then
  echo "installing node@${NODE_MAJOR} and @modelcontextprotocol/conformance@${HARNESS_VERSION} into $PREFIX"
  mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
    "node@${NODE_MAJOR}" "@modelcontextprotocol/conformance@${HARNESS_VERSION}"
fi
export PATH="$PWD/$bin:$PATH"
echo "node $(node --version), conformance $(installed_harness)"

# Byte-compile first so the client's start-up is not part of any scenario's timing.
"$PYTHON" -m compileall -q src tests/conformance >/dev/null

rm -rf "$OUT"
mkdir -p "$OUT"
status=0
for scenario in "${SCENARIOS[@]}"; do
  # `exec`: the harness's --timeout then kills the client itself, not just /bin/sh.
  if ! conformance client --command "exec $PYTHON $CLIENT" \
      --scenario "$scenario" --timeout 60000 -o "$OUT" >"$OUT/$scenario.log" 2>&1; then
    echo "conformance: scenario $scenario FAILED (harness exit code non-zero); log:"
    tail -n 40 "$OUT/$scenario.log"
    status=1
  fi
done

# Judge from the recorded checks, not from the exit code alone.
"$PYTHON" - "$OUT" "${SCENARIOS[@]}" <<'PY' || status=1
import json
import sys
from pathlib import Path

out, scenarios = Path(sys.argv[1]), sys.argv[2:]
required = {
    "initialize": {"mcp-client-initialization"},
    "tools_call": {"tool-add-numbers"},
    "elicitation-sep1034-client-defaults": {
        f"client-elicitation-sep1034-{kind}-default"
        for kind in ("string", "integer", "number", "enum", "boolean")
    },
    "sse-retry": {
        "client-sse-graceful-reconnect",
        "client-sse-retry-timing",
        "client-sse-last-event-id",
    },
}
ok = True
print("conformance summary (@modelcontextprotocol/conformance 0.1.16):")
for scenario in scenarios:
    runs = sorted(out.glob(f"{scenario}-*/checks.json"))
    if not runs:
        print(f"  {scenario}: NO RESULTS")
        ok = False
        continue
    checks = json.loads(runs[-1].read_text())
    count = {s: sum(c["status"] == s for c in checks) for s in ("SUCCESS", "FAILURE", "WARNING")}
    succeeded = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    missing = required.get(scenario, set()) - succeeded
    good = count["FAILURE"] == 0 and count["WARNING"] == 0 and count["SUCCESS"] > 0 and not missing
    ok &= good
    line = (
        f"  {'ok  ' if good else 'FAIL'} {scenario}: {count['SUCCESS']} passed, "
        f"{count['FAILURE']} failed, {count['WARNING']} warnings"
    )
    timing = next((c for c in checks if c["id"] == "client-sse-retry-timing"), None)
    if timing is not None and "details" in timing:
        line += f" (reconnect after {timing['details'].get('actualDelayMs')} ms)"
    print(line)
    for check in checks:
        if check["status"] in ("FAILURE", "WARNING"):
            why = check.get("errorMessage") or (check.get("details") or {}).get("message", "")
            print(f"       {check['status']} {check['id']}: {why}")
    for check_id in sorted(missing):
        print(f"       MISSING SUCCESS {check_id}")
sys.exit(0 if ok else 1)
PY

exit "$status"

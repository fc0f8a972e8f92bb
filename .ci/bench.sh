#!/usr/bin/env bash
# The quick benchmark, printed for the log. CI does not judge the numbers (the machine is
# shared and noisy): slow is never a failure here, but a benchmark that crashes, hangs, or
# catches a client answering wrongly is (bench/run.py exits non-zero then).
set -euo pipefail
cd "$(dirname "$0")/.."

python=.venv/bin/python
[ -x "$python" ] || python=python3
# Reports go to a scratch folder so a local CI run leaves the committed full results alone.
out="${BENCH_OUT:-$(mktemp -d)}"
# The quick run takes under two minutes; ten is a hang.
timeout --kill-after=30 600 "$python" bench/run.py --quick --out "$out"

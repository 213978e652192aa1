#!/usr/bin/env bash
# exhaustive.sh: every kernel of the small scope (at most 3 instructions
# over 3 engines, at most 2 loops or conditionals, nested or not, with or
# without else, bounds from N or the outer
# variable, tiles with 1 or 2 slots; the grammar and the canonical forms are
# described in driver/cmd_campaign.c), judged by the oracle at N = 0..3
# under both sync modes. Every one must pass, and the count is checked so
# the scope cannot shrink unnoticed. QUICK=1 (the sanitizer pass): at most
# 2 instructions. No golden files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "exhaustive.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
expected=1723086 instructions=3
[[ -n ${QUICK:-} ]] && expected=13986 instructions=2
out=$("$BFSYNC" campaign --exhaustive --instructions $instructions --schedules 1 --json)
echo "$out"
python3 - "$out" "$expected" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
want = int(sys.argv[2])
assert d["kernels"] == want, f"exhaustive: {d['kernels']} kernels, expected {want}"
assert d["oracle_checks"] == 8 * want, "exhaustive: not 8 oracle checks per kernel"
assert d["failures"] == 0 and not d["crashed"], "exhaustive: failures"
print(f"exhaustive.sh: ok, {want} kernels, {d['oracle_checks']} oracle checks")
PY

#!/usr/bin/env bash
# exhaustive.sh: every kernel of the small scope (at most 3 instructions
# over act, dve and pool, the core scope; at most 2 over every engine of
# the default target, pe and dma with an hbm tensor included, and dma1, a
# transfer pinned to a second queue; at most 2
# loops or conditionals (with or without else) nested or not, bounds from
# N or the outer variable, conditions on N or a loop variable, tiles with 1 or
# 2 slots; the grammar and the canonical forms are described in
# harness/exhaustive.c), judged by the oracle at N = 0..3 under both sync
# modes. Every one must pass, and the counts are checked so the scope
# cannot shrink unnoticed. QUICK=1 (the sanitizer pass): the core scope at
# 2 instructions. FULL=1 (`make exhaustive`): every engine at 3
# instructions. No golden files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "exhaustive.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
scopes=("core 3 1723086" "all 2 84448")
[[ -n ${QUICK:-} ]] && scopes=("core 2 13986" "all 2 84448")
[[ -n ${FULL:-} ]] && scopes=("all 3 16504468")
for scope in "${scopes[@]}"; do
  read -r engines instructions expected <<<"$scope"
  out=$("$BFSYNC" campaign --exhaustive --engines "$engines" --instructions "$instructions" --schedules 1 --json)
  echo "$engines: $out"
  python3 - "$out" "$expected" "$engines" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
want, scope = int(sys.argv[2]), sys.argv[3]
assert d["kernels"] == want, f"exhaustive ({scope}): {d['kernels']} kernels, expected {want}"
assert d["oracle_checks"] == 8 * want, "exhaustive: not 8 oracle checks per kernel"
assert d["failures"] == 0 and not d["crashed"], "exhaustive: failures"
print(f"exhaustive.sh: ok, {scope}: {want} kernels, {d['oracle_checks']} oracle checks")
PY
done

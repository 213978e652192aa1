#!/usr/bin/env bash
# valgrind.sh: the JIT path under valgrind memcheck, with no errors and no
# leaks (definite, indirect or possible): `bfsync run` on examples with
# both sync modes, with the race checker and jitter, on the simulator, and
# `bfsync verify` (the oracle) and `bfsync campaign` on a few seeds.
# Skipped in the sanitizer pass (QUICK=1: an ASan binary cannot run under
# valgrind) and, with a message, when valgrind is missing after make deps.
# No golden files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "valgrind.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
if [[ -n ${QUICK:-} ]]; then
  echo "valgrind.sh: skipped in the sanitizer pass (ASan binaries do not run under valgrind)"
  exit 0
fi
if ! command -v valgrind >/dev/null; then
  echo "valgrind.sh: SKIPPED: valgrind is not installed; run make deps"
  exit 0
fi
failures=0
memcheck() {
  local log
  log=$(mktemp)
  if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
      --show-leak-kinds=definite,indirect,possible --trace-children=no "$BFSYNC" "$@" >/dev/null 2>"$log"; then
    echo "clean: bfsync $*"
  else
    echo "FAIL: valgrind: bfsync $*"; cat "$log"; failures=$((failures + 1))
  fi
  rm -f "$log"
}
memcheck run examples/matmul.bfk -p M=1 -p N=1 -p K=2 --sync=both
memcheck run examples/softmax.bfk -p R=2 --sync=both --check --jitter
memcheck run examples/attention.bfk -p S=2 --sync=both --exec=sim --json
memcheck verify examples/layernorm.bfk -p R=2
memcheck campaign --from 1 --count 3 --jobs 1 --gcc-every 0 --size 8
[[ $failures == 0 ]] || { echo "valgrind.sh: $failures failures"; exit 1; }
echo "valgrind.sh: ok"

#!/usr/bin/env bash
# run.sh: `make bench`. Builds bench/wait_cost.c against the runtime library
# next to the bfsync binary, and bench/rusage.c (a command's CPU time and
# peak memory), then runs bench/bench.py, which writes
# bench/results.md, bench/results.json and bench/svg/<kernel>.svg.
#
# The figures are reproducible: the simulator's cycles are identical on
# every machine; only the threads executor's wall-clock ratios and the
# compile times depend on the host, and results.md says which host.
#
# usage: bash bench/run.sh path/to/bfsync
# env:   TARGET=file (default targets/trn1.target), REPEAT=n (runs per
#        compile-time median, default 3), THREADS_REPEAT=n (runs per
#        threads-executor median, default 5), QUICK=1 (skip the generated
#        kernels' 100k-instruction compile), OUT=dir (default bench/), COMPILE_ONLY=1
#        (only the compile section; the others are kept from results.json),
#        RESOURCES_ONLY=1 (only the resources section, likewise), PAPER_ONLY=1
#        (only the paper's table on trn2, likewise)
set -euo pipefail

bfsync=${1:?usage: bash bench/run.sh path/to/bfsync}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$(dirname "$bfsync")" && pwd)
target=${TARGET:-$root/targets/trn1.target}
out=${OUT:-$root/bench}

command -v python3 >/dev/null || { echo "bench: python3 is required (make deps installs it)" >&2; exit 1; }
command -v tcc >/dev/null || { echo "bench: tcc is required (make deps installs it)" >&2; exit 1; }

${CC:-gcc} -std=c11 -O2 -I"$root/runtime" -o "$build/wait_cost" "$root/bench/wait_cost.c" \
  "$build/libbfrt.a" -lpthread -lm
${CC:-gcc} -std=c11 -O2 -o "$build/rusage" "$root/bench/rusage.c"

quick=()
[ -n "${QUICK:-}" ] && quick=(--quick)
[ -n "${COMPILE_ONLY:-}" ] && quick+=(--compile-only)
[ -n "${RESOURCES_ONLY:-}" ] && quick+=(--resources-only)
[ -n "${PAPER_ONLY:-}" ] && quick+=(--paper-only)
python3 "$root/bench/bench.py" --bfsync "$(cd "$(dirname "$bfsync")" && pwd)/$(basename "$bfsync")" \
  --target "$target" --out "$out" --wait-cost "$build/wait_cost" --rusage "$build/rusage" --repeat "${REPEAT:-3}" \
  --threads-repeat "${THREADS_REPEAT:-5}" "${quick[@]}"

# The NKI ports' section (views against the whole-tile workaround), after
# bench.py has written the rest of results.md.
BFSYNC="$bfsync" bash "$root/bench/ports.sh" --write "$out/results.md"

#!/usr/bin/env bash
# bench/ports.sh: per NKI port, the DMA transfers and the waits of the
# faithful port (examples/nki, with tile views, element slices and ragged
# tails) against the old whole-tile workaround (bench/ports_old), at one
# parameter set both can run (no ragged tail: the workaround cannot express
# one). DMA transfers: the dma queues' instructions from
# `bfsync compile FILE --resources --json -p ...`; waits: `bfsync verify
# FILE --json -p ...` (barrier-free); per iteration: divided by the
# iterations named in the table (the totals include each kernel's one-time
# loads). Prints the section of bench/results.md; with --write FILE it
# replaces that section of FILE (or appends it), as bench/run.sh does after
# bench.py has written the rest.
#
# usage: BFSYNC=build/bfsync bash bench/ports.sh [--write bench/results.md]
set -eu
BFSYNC=${BFSYNC:-build/bfsync}
BFSYNC=$(cd "$(dirname "$BFSYNC")" && pwd)/$(basename "$BFSYNC")
write=
if [[ ${1:-} == --write ]]; then write=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); fi
cd "$(dirname "$0")/.."
count() { # FILE PARAMS... -> "dma waits cycles"
  local f=$1; shift
  local args=()
  for a in "$@"; do args+=(-p "$a"); done
  local dma waits cycles
  dma=$("$BFSYNC" compile "$f" --resources --json "${args[@]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(e.get("instructions") or 0 for e in d["engines"] if e["engine"].startswith("dma")))')
  waits=$("$BFSYNC" verify "$f" --json "${args[@]}" | tail -1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["waits"])')
  cycles=$("$BFSYNC" run "$f" "${args[@]}" --exec=sim --timing-only --json | tail -1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["cycles"])')
  echo "$dma $waits $cycles"
}
section() {
echo "## NKI ports: views against the whole-tile workaround"
echo
echo "Per port of examples/nki (docs/nki.md, \"Ports of real kernels\"), the DMA transfers and the waits of"
echo "the faithful port, with tile views, element slices and ragged tails, against the old whole-tile"
echo "workaround in bench/ports_old, at a size both can run (the workaround has no ragged tail)."
echo "DMA transfers: the dma queues' instructions of \`bfsync compile FILE --resources --json -p ...\`;"
echo "waits: \`bfsync verify FILE --json -p ...\` (barrier-free); cycles: \`bfsync run FILE -p ... --exec=sim"
echo "--timing-only --json\` (barrier-free, the trn1 cost model). Written by \`bash bench/ports.sh\`."
echo "blockwise_mm's workaround is its port before gather and scatter by index: each gather of 128 token"
echo "rows and the scatter were 128 one-row DMAs X[TPI[r, 0], :] (the port gathers all 128 in one)."
echo "The ports' ragged views cost waits where the workaround has none to"
echo "cost: rmsnorm's 13 against 11 are the ragged fallback (\`bfsync compile --explain\`: a ragged view"
echo "is tracked over its whole clipped dimension); the same port with its ragged bounds replaced by"
echo "whole tiles has 11. Fewer transfers are not always fewer cycles: matmul's port simulates"
echo "slower than its workaround because at the port's TILES_IN_BLOCK_N = 1 the packed row is a single"
echo "result tile, so the source's packing tensor_copy (one per result tile, on VectorE) buys no"
echo "coalescing; the port saves only the lhsT loads (one [128, 256] DMA instead of two). The port"
echo "with its result tiles stored directly, no packing, simulates 54695 cycles at NBN=2 NBK=2, below"
echo "the workaround's 55121 (measured by hand, the same command)."
echo
echo "| port | params | iterations | DMA transfers, port | DMA, workaround | waits, port | waits, workaround | per iteration (port / workaround): DMA, waits | simulated cycles, port / workaround |"
echo "|---|---|---:|---:|---:|---:|---:|---|---|"
row() { # NAME ITERS ITERNAME PARAMS...
  local name=$1 iters=$2 what=$3; shift 3
  read -r pd pw pc < <(count "examples/nki/$name.bfk" "$@")
  read -r od ow oc < <(count "bench/ports_old/$name.bfk" "$@")
  python3 -c "
n, it, what, pd, pw, od, ow, pc, oc, ps = '$name', $iters, '$what', $pd, $pw, $od, $ow, $pc, $oc, '$*'
print(f'| {n} | {ps} | {it} {what} | {pd} | {od} | {pw} | {ow} | {pd/it:.2f} / {od/it:.2f}, {pw/it:.2f} / {ow/it:.2f} | {pc} / {oc} |')"
}
row rmsnorm 2 "row tiles" N=256
row layernorm 2 "row tiles" N=256
row cumsum 4 "(p, f) tiles" B=256 H=4096
row rotary 8 "(b, h, t) tiles" B=2 NH=2 S=256
row matmul 4 "(n, k) blocks" NBN=2 NBK=2
row attention 6 "pipeline steps" S=512 CAUSAL=0
row attention 6 "pipeline steps" S=512 CAUSAL=1
row blockwise_mm 2 "blocks" T=300 N=2
}
if [[ -z $write ]]; then section; exit 0; fi
section >"$write.ports"
python3 - "$write" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read() if __import__("os").path.exists(path) else ""
new = open(path + ".ports").read()
head = "## NKI ports: views against the whole-tile workaround"
if head in text:
    a = text.index(head)
    b = text.find("\n## ", a + len(head))
    text = text[:a] + new + (text[b + 1:] if b >= 0 else "")
else:
    text = text.rstrip("\n") + "\n\n" + new
open(path, "w").write(text)
PY
rm -f "$write.ports"

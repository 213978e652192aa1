#!/usr/bin/env bash
# nd.sh: N-D hbm tensors and strided slices (docs/language.md, "Operands").
#
#  - each kernel of tests/kernels/nd_slices.bfk, strided.bfk,
#    nd_attention.bfk, strided_views.bfk and strided_same_start.bfk at
#    every `// params:` line: `verify` (races 0,
#    early 0, late 0 with no fallback needed), `run --sync=both --jitter --check` on threads (bit for bit
#    with the sequential reference, within the f64 bound), and a run on the
#    simulator;
#  - the emitted C of strided views and N-D slices under gcc -pedantic,
#    linked with libbfrt.a, computes what bfsync run does;
#  - the strided loads that interleave without touching a store wait for
#    nothing, the overlapping one waits; two strided views of a tile that
#    interleave never wait on each other; a slice with the start and extent
#    of another but another step is not taken for the same cells
#    (compile --explain);
#  - a slice outside its tensor at run time is an error naming the line,
#    the tensor and the range, in the runtime's and the reference's words;
#  - a read through a strided view of elements no op wrote is reported at
#    the first one (the even columns written, the odd ones not);
#  - an N-D tensor's .npy files have its shape (the flattened one is read
#    too; another shape is refused, naming both).
# Env: BFSYNC (the binary), QUICK=1 (the first two parameter sets only).
# No golden files: UPDATE=1 changes nothing.
set -uo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "nd.sh: no golden files to update"; exit 0; fi
source "$(dirname "$0")/lib.sh"

for k in tests/kernels/nd_slices.bfk tests/kernels/strided.bfk tests/kernels/nd_attention.bfk \
  tests/kernels/strided_views.bfk tests/kernels/strided_same_start.bfk; do
  n=0
  while read -r line; do
    n=$((n + 1))
    [ "${QUICK:-}" = 1 ] && [ $n -gt 2 ] && break
    # shellcheck disable=SC2086
    "$BFSYNC" verify "$k" $(echo "$line" | sed 's/\([A-Za-z_][A-Za-z0-9_]*=\)/-p \1/g') >"$tmp/v" 2>&1 ||
      fail "verify $k $line"
    grep -q "races 0, early 0, late 0 (+0 explained by a fallback)" "$tmp/v" || fail "verify $k $line: not exact"
    # shellcheck disable=SC2086
    "$BFSYNC" run "$k" $line --sync=both --jitter --check >"$tmp/r" 2>&1 || fail "run $k $line: $(tail -1 "$tmp/r")"
    # shellcheck disable=SC2086
    "$BFSYNC" run "$k" $line --exec=sim >"$tmp/s" 2>&1 || fail "run --exec=sim $k $line: $(tail -1 "$tmp/s")"
  done < <(sed -n 's|^// params:||p' "$k")
done

# The emitted C of strided views and N-D slices: gcc -pedantic, linked with libbfrt.a, results as bfsync run's.
san_flags=""
if nm "$BUILD/libbfrt.a" 2>/dev/null | grep __asan >/dev/null; then san_flags="-fsanitize=address,undefined"; fi
for k in tests/kernels/nd_slices.bfk tests/kernels/strided_views.bfk; do
  name=$(basename "$k" .bfk)
  ps=$(sed -n 's|^// params:||p' "$k" | head -1)
  "$BFSYNC" compile "$k" -o "$tmp/$name.c" || { fail "compile $k"; continue; }
  gcc -std=c99 -Wall -Wextra -Werror -pedantic -Iruntime -c "$tmp/$name.c" -o "$tmp/$name.o" 2>"$tmp/gcc.err" ||
    { fail "gcc rejects $name.c: $(head -3 "$tmp/gcc.err")"; continue; }
  gcc -std=c11 $san_flags -rdynamic -I. -Iruntime tests/host_main.c "$tmp/$name.o" "$BUILD/libbfrt.a" -ldl -lpthread -lm \
    -o "$tmp/host" || { fail "cannot link $name"; continue; }
  rm -rf "$tmp/h" "$tmp/r" && mkdir -p "$tmp/h" "$tmp/r"
  # shellcheck disable=SC2086
  "$tmp/host" "bfk_${name}_barrier_free" 7 "$tmp/h" $(echo "$ps" | sed 's/[A-Za-z_0-9]*=//g') || { fail "$name built by gcc failed"; continue; }
  compgen -G "$tmp/h/*.f32" >/dev/null || { fail "$name built by gcc wrote no outputs"; continue; }
  outs=""
  for f in "$tmp"/h/*.f32; do outs="$outs --output $(basename "$f" .f32)=$tmp/r/$(basename "$f" .f32).npy"; done
  # shellcheck disable=SC2086
  "$BFSYNC" run "$k" $ps --seed 7 $outs >/dev/null 2>&1 || { fail "run $k --seed 7"; continue; }
  python3 - "$tmp/h" "$tmp/r" <<'PY' || fail "$name: gcc-built results differ from bfsync run"
import os, sys
h, r = sys.argv[1], sys.argv[2]
for f in os.listdir(h):
    npy = open(os.path.join(r, f[:-4] + ".npy"), "rb").read()
    assert npy[10 + (npy[8] | npy[9] << 8):] == open(os.path.join(h, f), "rb").read(), f
PY
done

line_of() { grep -n "$1" "$2" | head -1 | cut -d: -f1; }

# Interleaved strided regions never wait on each other; overlapping ones do.
"$BFSYNC" compile tests/kernels/strided.bfk --explain >"$tmp/x" 2>&1 || fail "compile --explain strided.bfk"
grep -q "^dma1 line $(line_of "dma1: load o, Z" tests/kernels/strided.bfk):" "$tmp/x" &&
  fail "strided.bfk: the odd columns wait for the even ones' store"
grep -q "^dma1 line $(line_of "dma1: load e, Z" tests/kernels/strided.bfk): wait dma0" "$tmp/x" ||
  fail "strided.bfk: the even columns do not wait for their store"

# Interleaved strided views of one tile: act (even columns) and dve (odd) never wait on each other.
"$BFSYNC" compile tests/kernels/strided_views.bfk --explain >"$tmp/x" 2>&1 || fail "compile --explain strided_views.bfk"
even=$(line_of "act: exp y" tests/kernels/strided_views.bfk)
odd=$(line_of "dve: scale y" tests/kernels/strided_views.bfk)
both=$(line_of "pool: copy y" tests/kernels/strided_views.bfk)
grep -q "^act line $even: wait dve" "$tmp/x" && fail "strided_views.bfk: the even columns wait for the odd ones"
grep -q "^dve line $odd: wait act" "$tmp/x" && fail "strided_views.bfk: the odd columns wait for the even ones"
grep -q "^pool line $both: wait act" "$tmp/x" && grep -q "^pool line $both: wait dve" "$tmp/x" ||
  fail "strided_views.bfk: pool (both parities) does not wait for both writers"
grep -q "one of its views has steps" "$tmp/x" || fail "strided_views.bfk: --explain does not name the per-slot fallback"
# Same start and extent, another step: only the stepped load meets the store (its wait is not implied).
"$BFSYNC" compile tests/kernels/strided_same_start.bfk --explain >"$tmp/x" 2>&1 || fail "compile strided_same_start.bfk"
grep -q "^dma1 line $(line_of "dma1: load c, Z" tests/kernels/strided_same_start.bfk): wait dma0" "$tmp/x" ||
  fail "strided_same_start.bfk: Z[:, 0:16:2] does not wait for the store"

# A computed N-D slice outside its tensor: the runtime's error, and the reference's.
cat >"$tmp/oob.bfk" <<'K'
kernel oob(S: int) {
  hbm in Q: f32[2, 3, 8, 16];
  hbm out O: f32[4, 16];
  sbuf q: f32[4, 16];
  dma: load q, Q[1, 2, S : S + 4, 0:16:1];
  dma: store O[0:4, :], q;
}
K
"$BFSYNC" run "$tmp/oob.bfk" -p S=6 >"$tmp/o" 2>&1 && fail "an N-D slice outside its tensor ran"
grep -q "line 5.*load from Q: rows 46:50 are outside the tensor's 0:48" "$tmp/o" ||
  fail "oob.bfk: $(head -2 "$tmp/o")"
"$BFSYNC" run "$tmp/oob.bfk" -p S=4 >"$tmp/o" 2>&1 || fail "oob.bfk S=4: $(tail -1 "$tmp/o")"

# A computed strided slice whose last index falls outside: the span it reaches is named.
cat >"$tmp/srt.bfk" <<'K'
kernel srt(N: int) {
  hbm in Z: f32[8, 16];
  hbm out Y: f32[8, 8];
  sbuf z: f32[8, 8];
  dma: load z, Z[:, N : N + 16 : 2];
  dma: store Y[:, :], z;
}
K
"$BFSYNC" run "$tmp/srt.bfk" -p N=2 >"$tmp/o" 2>&1 && fail "a strided slice outside its tensor ran"
grep -q "kernel srt, line 5: load from Z: columns 2:17 are outside the tensor's 0:16" "$tmp/o" || fail "srt.bfk: $(head -2 "$tmp/o")"
"$BFSYNC" run "$tmp/srt.bfk" -p N=1 >"$tmp/o" 2>&1 || fail "srt.bfk N=1 (columns 1, 3, .., 15): $(tail -1 "$tmp/o")"

# Read before write through a strided view: the even columns written, the odd ones not.
cat >"$tmp/rbw.bfk" <<'K'
kernel rbw(N: int) {
  hbm out O: f32[8, 8];
  sbuf y: f32[8, 16];
  sbuf z: f32[8, 8];
  dve: fill y[:, 0:16:2], 1.0;
  dve: copy z, y[:, 0:16:2];
  dma: store O[:, :], z;
  dve: copy z, y[:, 0:8];
  dma: store O[:, :], z;
}
K
"$BFSYNC" run "$tmp/rbw.bfk" -p N=1 >"$tmp/o" 2>&1 && fail "a read of unwritten odd columns ran"
grep -q "kernel rbw, line 8: 'copy' reads tile y before anything wrote it (its element \[0, 1\])" "$tmp/o" ||
  fail "rbw.bfk: $(head -1 "$tmp/o")"

# The simulator charges a transfer by its shape: 512 columns strided cost more than 512 contiguous ones.
for cols in "0:512" "0:1024:2"; do
  cat >"$tmp/cost.bfk" <<K
kernel cost(N: int) {
  hbm in X: f32[128, 1024];
  hbm out Y: f32[128, 512];
  sbuf x: f32[128, 512];
  dma: load x, X[:, $cols];
  dma: store Y[:, :], x;
}
K
  "$BFSYNC" run "$tmp/cost.bfk" -p N=1 --exec=sim --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['cycles'])" >>"$tmp/cycles" ||
    fail "cost.bfk ($cols) on the simulator"
done
python3 - "$tmp/cycles" <<'PY' || fail "a strided load is not charged more than a contiguous one: $(tr '\n' ' ' <"$tmp/cycles")"
import sys
contiguous, strided = (int(x) for x in open(sys.argv[1]).read().split())
assert strided > 2 * contiguous, (contiguous, strided)
PY

# The ideal charges a ragged transfer by its clipped rows, as the simulator does: ideal_cycles <= cycles
# (docs/runtime.md) on ragged sizes (rmsnorm's ideal charged 128 rows of its 44-row tail and exceeded it).
for run in "examples/nki/rmsnorm.bfk -p N=300" "tests/kernels/nd_slices.bfk -p B=2 -p H=2 -p S=12" \
  "tests/kernels/nd_attention.bfk -p B=1 -p H=2 -p S=20"; do
  # shellcheck disable=SC2086
  "$BFSYNC" run $run --exec=sim --json 2>/dev/null |
    python3 -c "import json, sys; d = json.load(sys.stdin); sys.exit(d['ideal_cycles'] > d['cycles'])" ||
    fail "$run: ideal_cycles above cycles"
done

# .npy files of an N-D tensor: written in its own shape, read in it or flattened, another shape refused.
"$BFSYNC" run tests/kernels/nd_slices.bfk -p B=1 -p H=2 -p S=16 --output Q="$tmp/q4.npy" >/dev/null 2>&1 ||
  fail "nd_slices.bfk --output Q"
head -c 128 "$tmp/q4.npy" | grep -aq "'shape': (1, 2, 16, 16)" || fail "an N-D tensor's .npy does not have its shape"
python3 - "$tmp" <<'PY'
import struct, sys
def save(path, shape):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    n = 1
    for x in shape: n *= x
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%df" % n, *[0.5] * n))
save(sys.argv[1] + "/flat.npy", (32, 16)); save(sys.argv[1] + "/three.npy", (2, 16, 16))
PY
for f in q4 flat; do
  "$BFSYNC" run tests/kernels/nd_slices.bfk -p B=1 -p H=2 -p S=16 --input Q="$tmp/$f.npy" >"$tmp/o" 2>&1 ||
    fail "--input Q=$f.npy: $(tail -1 "$tmp/o")"
done
"$BFSYNC" run tests/kernels/nd_slices.bfk -p B=1 -p H=2 -p S=16 --input Q="$tmp/three.npy" >"$tmp/o" 2>&1 &&
  fail "a 3-D .npy for a 4-D tensor was read"
grep -q "array is 3-D: shape (2, 16, 16) does not match tensor Q \[1, 2, 16, 16\] (or \[32, 16\] flattened)" "$tmp/o" ||
  fail "three.npy: $(head -1 "$tmp/o")"

finish

#!/usr/bin/env bash
# trn2.sh: targets/trn2.target, the Trainium2 model of issue 23.
#
# 1. It loads (bfsync check --target) and every example runs on it on the
#    simulator at its first `// params:` line, both sync modes, with
#    results equal to the reference, the f64 reference within bounds, and
#    cycles that differ from trn1's (it is not the default target).
# 2. Every value in it names its source: each value line has a comment
#    with a [source] tag, "fit" or "assumption", and exactly one value
#    (barrier_cost, in every kind) is a fit.
# 3. Each paper kernel (bench/paper) runs at a small size on it, checked,
#    and at the paper's size in --timing-only mode.
# 4. matmul_narrow_factor (pe) and the nc_transpose rate (dve) are set.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
T=targets/trn2.target
first_params() { sed -n 's|^// params:||p' "$1" | head -1 | sed 's/\([A-Za-z_][A-Za-z0-9_]*=\)/-p \1/g'; }
paper_params() { sed -n 's|^// paper:||p' "$1" | head -1 | sed 's/\([A-Za-z_][A-Za-z0-9_]*=\)/-p \1/g'; }
cycles() { python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["cycles"]) for l in open(sys.argv[1])))' "$1"; }

# ---- 1.
"$BFSYNC" check --target "$T" examples/softmax.bfk >/dev/null 2>"$tmp/err" || fail "check --target $T: $(head -2 "$tmp/err")"
for f in examples/*.bfk; do
  p=$(first_params "$f")
  # shellcheck disable=SC2086
  "$BFSYNC" run "$f" $p --exec=sim --sync=both --target "$T" --json >"$tmp/trn2.json" 2>"$tmp/err" ||
    { fail "$f on trn2: $(head -2 "$tmp/err")"; continue; }
  # shellcheck disable=SC2086
  "$BFSYNC" run "$f" $p --exec=sim --sync=both --json >"$tmp/trn1.json" 2>/dev/null
  [ "$(cycles "$tmp/trn2.json")" != "$(cycles "$tmp/trn1.json")" ] || fail "$f: the same cycles on trn2 as on trn1"
done

# ---- 2.
python3 - "$T" <<'PY' || fail "$T: a value without a source, or not exactly one fitted key"
import re, sys
fits = set()
for n, line in enumerate(open(sys.argv[1]), 1):
    body = line.split("#", 1)
    if not re.match(r"\s*[a-z_.]+\s*=", body[0]) or body[0].strip().startswith("name"):
        continue
    why = body[1] if len(body) > 1 else ""
    key = body[0].split("=")[0].strip()
    assert re.search(r"\[[a-z0-9-]+\]|\bfit\b|assumption|as pe", why), "line %d: %s has no source" % (n, key)
    if re.search(r"#\s*fit\b", line):
        fits.add(key)
assert fits == {"barrier_cost"}, fits
PY

# ---- 3.
for f in bench/paper/*.bfk; do
  p=$(first_params "$f")
  # shellcheck disable=SC2086
  "$BFSYNC" run "$f" $p --exec=sim --sync=both --target "$T" >/dev/null 2>"$tmp/err" || fail "$f (small) on trn2: $(head -2 "$tmp/err")"
  p=$(paper_params "$f")
  [ -n "$p" ] || { fail "$f has no // paper: line"; continue; }
  # shellcheck disable=SC2086
  "$BFSYNC" run "$f" $p --exec=sim --sync=both --target "$T" --timing-only >/dev/null 2>"$tmp/err" ||
    fail "$f at the paper's size, --timing-only on trn2: $(head -2 "$tmp/err")"
done

# ---- 4. The TensorE's narrow-input rate and the VectorE's transpose rate
# are the target's own (not the defaults a missing key leaves): an
# nc_matmul from bf16 tiles keeps the pe busy a quarter of the f32 time,
# and a 32 x 32 nc_transpose on the dve its overhead plus 32 / 0.8 cycles.
for ty in f32 bf16; do
  cat >"$tmp/nm_$ty.bfk" <<EOF
kernel nm() {
  hbm in A: f32[128, 128];
  hbm in B: f32[128, 512];
  hbm out C: f32[128, 512];
  hbm in T: f32[32, 32];
  hbm out U: f32[32, 32];
  sbuf a: $ty[128, 128];
  sbuf b: $ty[128, 512];
  psum c: f32[128, 512];
  sbuf d: f32[128, 512];
  sbuf t: f32[32, 32];
  sbuf u: f32[32, 32];
  dma: load a, A[0, 0];
  dma: load b, B[0, 0];
  pe: nc_matmul c, a, b;
  act: copy d, c;
  dma: store C[0, 0], d;
  dma: load t, T[0, 0];
  dve: nc_transpose u, t;
  dma: store U[0, 0], u;
}
EOF
  "$BFSYNC" run "$tmp/nm_$ty.bfk" --exec=sim --target "$T" --json >"$tmp/nm_$ty.json" 2>"$tmp/err" || fail "nc_matmul ($ty) on trn2: $(head -2 "$tmp/err")"
done
python3 - "$tmp/nm_f32.json" "$tmp/nm_bf16.json" <<'PY' || fail "trn2: matmul_narrow_factor or the dve transpose rate is not the target's"
import json, sys
f32, bf16 = (json.loads(open(f).readline())["engines"] for f in sys.argv[1:])
pe = lambda e: e["pe"]["busy"] - 30  # the pe's overhead, once
assert pe(bf16) * 4 == pe(f32), (pe(f32), pe(bf16))
assert f32["dve"]["busy"] == 125 + 32 / 0.8, f32["dve"]
PY

finish

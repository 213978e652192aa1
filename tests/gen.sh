# gen.sh: `bfsync gen` prints valid kernels, deterministically.
#
# Every seed's kernel must pass `bfsync check`; the same seed must print the
# same kernel and the same parameters twice; the parameter line must be
# NAME=V pairs with small values that bind to the kernel; --size must scale
# to the 100,000 instructions of the compile-time benchmark; bad arguments
# are usage errors. No golden files: nothing here to regenerate under UPDATE=1.
set -u
: "${BFSYNC:?BFSYNC must name the bfsync binary}"
[[ -x $BFSYNC ]] || { echo "gen.sh: FAIL: $BFSYNC is not an executable" >&2; exit 1; }
source "$(dirname "$0")/lib.sh"

# One check over all the kernels: bfsync check names the failing file, and
# the file names the seed; then each runs. QUICK (the sanitizer pass) checks fewer seeds.
nseeds=200
[[ -n ${QUICK:-} ]] && nseeds=40
for seed in $(seq 1 "$nseeds"); do
  "$BFSYNC" gen --seed "$seed" >"$tmp/seed$seed.bfk" || fail "gen --seed $seed exited $?"
done
# Every tile slot is written before anything reads it: no warning either.
"$BFSYNC" check "$tmp"/seed*.bfk 2>"$tmp/check.err" || { fail "generated kernels do not check"; grep -m5 error: "$tmp/check.err" >&2; }
[[ -s $tmp/check.err ]] && { fail "check printed diagnostics for generated kernels"; head -5 "$tmp/check.err" >&2; }

# `bfsync run` accepts every generated kernel at its --params, numerics
# included: no tile read before a write, every value finite and in its
# type, every element of the out tensor stored, every result within the f64
# reference's bounds (harness/gen.c, "Values"). Two at a time.
runs=$nseeds
seq 1 "$runs" | xargs -P 2 -I{} sh -c '"$1" run "$2/seed$3.bfk" $("$1" gen --seed "$3" --params) >/dev/null 2>"$2/run$3.err" ||
  { echo "seed $3: $(head -c 300 "$2/run$3.err")"; }' sh "$BFSYNC" "$tmp" {} >"$tmp/runs.out"
[[ -s $tmp/runs.out ]] && fail "bfsync run refuses generated kernels: $(head -3 "$tmp/runs.out")"
# Element types: every narrow float type's tiles and tensors occur (harness/gen.c).
for type in bf16 fp16 fp8e4 fp8e5; do
  grep -q ": $type\[" "$tmp"/seed*.bfk || fail "no generated kernel has a $type tile or tensor"
done

# Views and element slices (harness/gen.c): a view of part of a big tile,
# one a loop variable's parity picks, [:, :], a slice straddling two tiles,
# ragged loads, lo : min(lo + D, E) into 0 : min(D, E - lo), and ragged
# stores the other way; the nki.isa ops' forms: tensor_reduce with negate,
# two-op tensor_scalar, activation with bias, scale and accumulator, a
# scan from a tile, affine patterns written as constant expressions, and
# strided regions: a column tile's even or odd columns, every other row or
# column of two tiles of a tensor.
for pattern in '\[[0-9]:[0-9], :\]' '4 \* \(v[0-9]+ % 2\) :' '\[:, :\]' '\[2:6, ' \
               'load [a-z][0-9][^,]*\[0 : min\(4, [^;]*, [XZVW]\[4 \* \([^)]*\) : min\(' \
               'store [ZVW]\[[^;]*min\([^;]*, [a-z][0-9][^,]*\[0 : min\(4, ' \
               'tensor_reduce [^;]*, negate;' 'tensor_scalar [^;]*, [a-z_]+, [^;]*, [a-z_]+, [^;]*;' \
               'activation [^;]*, [^;]*, [^;]*, r[0-9][^;]*, [-0-9.]+;' 'activation_acc ' \
               'tensor_tensor_scan [^;]*, r[0-9][^;]*, [a-z_]+, [a-z_]+;' '(iota|affine_select) [^;]*AFF' \
               'c[0-9][^,;]*\[:, [01]:8:2\]' '[XZVW]\[[^;]*\+ [01] : 4 \* \([^)]*\) \+ 8 : 2'; do
  grep -qE "$pattern" "$tmp"/seed*.bfk || fail "no generated kernel matches '$pattern'"
done

for seed in $(seq 1 20); do
  params=$("$BFSYNC" gen --seed "$seed" --params) || fail "gen --seed $seed --params exited $?"
  [[ $params =~ ^[NMK]=[0-4]( [NMK]=[0-4]){0,2}$ ]] || fail "seed $seed: bad --params line '$params'"
  grep -qxF "// params: $params" "$tmp/seed$seed.bfk" || fail "seed $seed: kernel lacks '// params: $params'"
done

for seed in 1 42 18446744073709551615; do
  "$BFSYNC" gen --seed "$seed" --size 300 >"$tmp/a" && "$BFSYNC" gen --seed "$seed" --size 300 >"$tmp/b" \
    || fail "gen --seed $seed --size 300 failed"
  cmp -s "$tmp/a" "$tmp/b" || fail "seed $seed is not deterministic"
  "$BFSYNC" check "$tmp/a" 2>/dev/null || fail "seed $seed --size 300 does not check"
done
"$BFSYNC" gen --seed 1 >"$tmp/a"
"$BFSYNC" gen --seed 2 >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && fail "seeds 1 and 2 print the same kernel"

# Every op of the language appears in a kernel of a few hundred instructions.
"$BFSYNC" gen --seed 5 --size 300 >"$tmp/k.bfk"
for op in load store matmul matmul_acc transpose copy fill scale exp relu tanh rsqrt recip \
          add sub mul max rowsum rowmax add_row sub_row mul_row \
          nc_matmul nc_matmul_acc nc_transpose memset iota affine_select tensor_reduce tensor_scalar \
          activation activation_acc tensor_tensor_scan bn_stats bn_aggr permute; do
  grep -qE "^ *([a-z0-9]+: )?$op " "$tmp/k.bfk" || fail "op $op missing from seed 5 --size 300"
done

"$BFSYNC" gen --seed 9 --size 100000 >"$tmp/big.bfk" || fail "gen --size 100000 failed"
instrs=$(grep -c ';$' "$tmp/big.bfk")
((instrs >= 100000 && instrs < 110000)) || fail "--size 100000 printed $instrs statements"
"$BFSYNC" check "$tmp/big.bfk" 2>/dev/null || fail "the --size 100000 kernel does not check"

expect_usage() {
  "$BFSYNC" gen "$@" >/dev/null 2>"$tmp/err"
  local status=$?
  [[ $status == 2 ]] || fail "gen $* exited $status, expected 2"
  [[ -s $tmp/err ]] || fail "gen $* printed no error"
}
expect_usage
expect_usage --seed
expect_usage --seed x
expect_usage --seed -1
expect_usage --seed 1 --size 0
expect_usage --seed 1 --size 10000001
expect_usage --seed 1 --bogus
"$BFSYNC" gen --help | grep -q -- '--params' || fail "gen --help does not describe --params"

finish

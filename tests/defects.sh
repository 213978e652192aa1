#!/usr/bin/env bash
# defects.sh: regressions for the defects of issue 20's hostile sweep, each
# a case that failed before its fix (the bad-input kernels with goldens are
# tests/bad/const_elems.bfk, f32_range.bfk, c_stack.bfk and
# tests/bad_targets/keywords.target; unit-level ones are in tests/unit:
# test_target's keywords, test_runtime's huge watchdog and NULL queries).
#
#  1. a kernel with 16 or more names, constants among them: check, fmt,
#     compile and run end (they spun forever in sema's declaration table);
#  2. `bfsync ops` with sixteen renamed DMA queues or a 300-character engine
#     name (a stack buffer overflow);
#  3. an Inf or NaN made from finite inputs in one element of a tile that
#     holds an Inf elsewhere is still stopped (the check is per element);
#  4. for each kind of nesting, the deepest expression check accepts
#     compiles and runs (libtcc ran out of its value stack), one more is a
#     positioned error;
#  5. a 40-link else-if chain and a 40-product index verify and run at once
#     (both walks were exponential);
#  9. `fill y, 3.4028235e38` (FLT_MAX as printed) runs;
#  and the smaller ones: an fp16 overflow only the immediate's f32 rounding
#  causes is blamed on the immediate; run --all-params without parameters;
#  --input naming a directory; fmt -i and compile -o through a hard link;
#  compile --resources -p with a huge parameter; make install into a PREFIX
#  with a space, an & and a quote; --trace after a failed run.
# Env: BFSYNC (the binary), BUILD (its build dir). No goldens of its own.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

# ---- 1. Sixteen constants beside a tensor and a tile (the average-pool port
# had fourteen): the declaration table grows with every kind of name.
{
  echo "kernel many_names() {"
  for i in $(seq 1 40); do echo "  const A$i = $i;"; done
  echo "  hbm inout X: f32[A16, A16];"
  echo "  sbuf x: f32[A16, A16];"
  echo "  dma: load x, X[0, 0];"
  echo "  act: scale x, x, A2;"
  echo "  dma: store X[0, 0], x;"
  echo "}"
} >"$tmp/names.bfk"
expect_status 0 check "$tmp/names.bfk"
expect_status 0 fmt "$tmp/names.bfk"
expect_status 0 compile "$tmp/names.bfk" -o "$tmp/names.c"
expect_status 0 run "$tmp/names.bfk"
# ... and a duplicate among them is still found.
sed 's/const A40 = 40;/const A3 = 40;/' "$tmp/names.bfk" >"$tmp/dup.bfk"
expect_status 1 check "$tmp/dup.bfk" && expect_stderr "duplicate name 'A3'"

# ---- 2. ops with sixteen renamed DMA queues, and with a 300-character name.
sed 's/^dma\([0-9]*\) = dma/dma_queue_\1 = dma/' targets/trn1.target >"$tmp/queues.target"
grep -q '^dma_queue_15 = dma' "$tmp/queues.target" || fail "could not rename trn1's DMA queues"
# (ops shows a kind with several engines as a whole, "dma queues", issue 22; a
# target whose one DMA queue has a long name prints that name)
expect_status 0 ops --target "$tmp/queues.target" && grep -q "^load .* dma queues " "$tmp/out" ||
  fail "ops does not show the sixteen queues as the dma queues"
long=$(printf 'e%.0s' $(seq 1 300))
sed "s/^act = act/$long = act/" targets/trn1.target >"$tmp/long.target"
expect_status 0 ops --target "$tmp/long.target" && grep -q "$long" "$tmp/out" || fail "ops does not print the long name"
sed -e '/^dma\([1-9]\|1[0-5]\) = dma/d' -e "s/^dma0 = dma/dma_$long = dma/" targets/trn1.target >"$tmp/one_queue.target"
expect_status 0 ops --target "$tmp/one_queue.target" && grep -q "dma_$long" "$tmp/out" ||
  fail "ops does not print the long name of the one DMA queue"

# ---- 3. exp over a tile whose [0, 0] is Inf and whose [1, 1] is 1000: the
# Inf is excused, the overflow of exp(1000) is not.
write_npy() { # $1 file, $2 rows, $3 cols, then the values row by row
  python3 - "$@" <<'PY'
import struct, sys
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vals = [float(v) for v in sys.argv[4:]]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
PY
}
cat >"$tmp/exp.bfk" <<'K'
kernel overflow() {
  hbm in X: f32[2, 2];
  hbm out Y: f32[2, 2];
  sbuf x: f32[2, 2];
  dma: load x, X[0, 0];
  act: exp x, x;
  dma: store Y[0, 0], x;
}
K
write_npy "$tmp/inf.npy" 2 2 inf 0 0 1000
expect_status 1 run "$tmp/exp.bfk" --input X="$tmp/inf.npy" && expect_stderr "'exp' produces Inf from finite inputs, at [1, 1] of 'x'"
write_npy "$tmp/inf_only.npy" 2 2 inf 0 0 1
expect_status 0 run "$tmp/exp.bfk" --input X="$tmp/inf_only.npy"
# The same per element for a row reduction (its row) and matmul (a row and a
# column): row 0 and column 0 hold the Inf, the rest overflows.
per_element() { # $1 the op line, $2 the result tile's declaration, $3 the message
  cat >"$tmp/shape.bfk" <<K
kernel shape() {
  hbm in X: f32[2, 2];
  hbm out Y: f32[2, 2];
  sbuf x: f32[2, 2];
  $2
  dma: load x, X[0, 0];
  $1
  dma: store Y[0, 0], x;
}
K
  expect_status 1 run "$tmp/shape.bfk" --input X="$tmp/t.npy" && expect_stderr "$3"
}
write_npy "$tmp/t.npy" 2 2 inf 0 1000 0
per_element "act: rowsum_exp r, x;" "sbuf r: f32[2, 1];" "'rowsum_exp' produces Inf from finite inputs, at [1, 0] of 'r'"
write_npy "$tmp/t.npy" 2 2 inf 0 1e30 1e30
per_element "pe: matmul m, x, x;" "psum m: f32[2, 2];" "'matmul' produces 1e+60, which overflows f32 to Inf, from finite inputs, at [1, 1] of 'm'"

# ---- 4. Deep expressions: for each nesting that costs libtcc's value stack
# (right operands, divisions, modulos, device reads in a row or a column),
# the deepest that check accepts, found by bisection, compiles and runs in
# both sync modes, used as an index, a loop bound and in a condition; one
# level more is refused by check (libtcc ran out of its value stack before,
# "memory full (vstack)", an internal error).
python3 - "$BFSYNC" "$tmp" <<'PY' || fail "a deep expression check accepts does not run"
import subprocess, sys
bfsync, tmp = sys.argv[1], sys.argv[2]
def nest(template, leaf, n):
    e = leaf
    for _ in range(n):
        e = template.format(e)
    return e
forms = {
    "right operand": lambda n: nest("0 - ({})", "i", n),
    "negation": lambda n: nest("-({})", "i", n),
    "division, left": lambda n: nest("({}) / 1", "i", n),
    "division, right": lambda n: "i * (" + nest("1 / ({})", "1", n) + ")",
    "modulo, right": lambda n: "i + 0 * (" + nest("5 % ({} + 4)", "1", n) + ")",
    "device read, row": lambda n: "i + 0 * (" + nest("C[{}, 0] % 4", "0", n) + ")",
    "device read, column": lambda n: "i + 0 * (" + nest("C[0, {}] % 4", "0", n) + ")",
}
def kernel(e):
    return f"""// params: N=2
kernel deep(N: int) {{
  hbm in C: i32[4, 4];
  hbm in X: f32[8, 4];
  hbm out Y: f32[2, 4];
  sbuf x: f32[1, 4];
  for i in 0 .. N {{
    dma: load x, X[{e}, 0];
    for j in 0 .. {e} + 1 {{
      act: exp x, x;
    }}
    if ({e} == 1) {{
      dve: add x, x, 1.0;
    }}
    dma: store Y[{e}, 0], x;
  }}
}}
"""
def run(args, n, form):
    path = f"{tmp}/deep.bfk"
    open(path, "w").write(kernel(forms[form](n)))
    return subprocess.run([bfsync] + args + [path], capture_output=True, text=True, timeout=300)
bad = 0
for form in forms:
    lo, hi = 1, 1000
    if run(["check"], hi, form).returncode == 0:
        print(f"{form}: {hi} levels accepted", file=sys.stderr); bad += 1; continue
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if run(["check"], mid, form).returncode == 0: lo = mid
        else: hi = mid
    r = run(["run", "--sync=both"], lo, form)
    if r.returncode != 0:
        print(f"{form}: {lo} levels accepted, but run fails: {r.stderr[-300:]}", file=sys.stderr); bad += 1
    r = run(["check"], lo + 1, form)
    if "expression nested too deeply to compile" not in r.stderr or r.returncode != 1:
        print(f"{form}: {lo + 1} levels: {r.stderr[-300:]}", file=sys.stderr); bad += 1
sys.exit(1 if bad else 0)
PY

# ---- 5. An else-if chain of 40 links (the oracle's depth walk recursed
# twice on each else: 2^40 calls) and an index that is a chain of 40
# products by constants (the dependence analysis walked a factor again once
# the other proved constant: 2^40 walks). Both verify and run at once.
{
  echo "// params: N=3"
  echo "kernel chains(N: int) {"
  echo "  hbm inout X: f32[64, 4];"
  echo "  sbuf x: f32[1, 4];"
  echo "  for i in 0 .. N {"
  printf "    dma: load x, X[i"; printf ' * 1%.0s' $(seq 1 40); echo ", 0];"
  printf "    "
  for j in $(seq 1 40); do printf "if (i == %d) {\n      act: exp x, x;\n    } else " "$j"; done
  printf "{\n      dve: add x, x, 1.0;\n    }\n"
  printf "    dma: store X[i"; printf ' * 1%.0s' $(seq 1 40); echo ", 0], x;"
  echo "  }"
  echo "}"
} >"$tmp/chains.bfk"
expect_status 0 verify "$tmp/chains.bfk" -p N=3
expect_status 0 run "$tmp/chains.bfk" --exec=sim

# ---- 9. fill with FLT_MAX as printed, 3.4028235e38, runs and matches both
# references (it rounds to FLT_MAX; tests/bad/f32_range.bfk has the refusals).
cat >"$tmp/fmax.bfk" <<'K'
kernel fmax() {
  hbm out Y: f32[2, 2];
  sbuf y: f32[2, 2];
  pool: fill y, 3.4028235e38;
  act: scale y, y, -1.0;
  dma: store Y[0, 0], y;
}
K
expect_status 0 run "$tmp/fmax.bfk" --sync=both

# ---- An fp16 overflow that only the immediate's rounding to f32 causes
# (65519.999 is below fp16's rounding threshold, 65520, its f32 rounding is
# not) is the immediate's fault, said so, not "off the f64 reference".
cat >"$tmp/narrow.bfk" <<'K'
kernel narrow() {
  hbm in X: fp16[2, 2];
  hbm out Y: fp16[2, 2];
  sbuf x: f32[2, 2];
  sbuf y: fp16[2, 2];
  dma: load x, X[0, 0];
  pool: scale x, x, 0.0;
  dve: add y, x, 65519.999;
  dma: store Y[0, 0], y;
}
K
expect_status 1 run "$tmp/narrow.bfk" &&
  expect_stderr "kernel narrow, line 8: 'add' produces 65520, which overflows fp16 to Inf, at [0, 0] of 'y', because the immediate 65519.999 rounds to 65520 in f32 (the exact result, 65519.999, would fit)"
sed 's/65519.999/65519.99/' "$tmp/narrow.bfk" >"$tmp/narrow_ok.bfk"
expect_status 0 run "$tmp/narrow_ok.bfk"

# ---- Smaller ones.
# run --all-params on a kernel without parameters: its one run.
printf '// params:\nkernel np() {\n  hbm out Y: f32[2, 2];\n  sbuf y: f32[2, 2];\n  pool: fill y, 1.0;\n  dma: store Y[0, 0], y;\n}\n' >"$tmp/np.bfk"
expect_status 0 run "$tmp/np.bfk" --all-params --json && [ "$(grep -c outputs_match "$tmp/out")" = 1 ] ||
  fail "--all-params without parameters: not one run"
expect_status 2 run examples/chain.bfk --all-params -p N=1
# --input naming a directory says so.
mkdir "$tmp/dir.npy"
expect_status 1 run examples/softmax.bfk -p R=1 --input X="$tmp/dir.npy" && expect_stderr "$tmp/dir.npy: Is a directory"

# fmt -i on a hard-linked file rewrites it in place: both names see the
# canonical text, they stay one inode, and no temporary is left.
mkdir "$tmp/links"
sed 's/^  hbm in X/  hbm in   X/' examples/layernorm.bfk >"$tmp/links/a.bfk"
ln "$tmp/links/a.bfk" "$tmp/links/b.bfk"
expect_status 0 fmt -i "$tmp/links/a.bfk"
[ "$(stat -c %i "$tmp/links/a.bfk")" = "$(stat -c %i "$tmp/links/b.bfk")" ] || fail "fmt -i broke a hard link"
cmp -s "$tmp/links/b.bfk" examples/layernorm.bfk || fail "fmt -i: the other link does not see the canonical text"
[ "$(ls "$tmp/links" | wc -l)" = 2 ] || fail "fmt -i left a temporary: $(ls "$tmp/links")"
# the same for a longer output (compile -o over a short hard-linked file)
echo short >"$tmp/links/c.c"
ln "$tmp/links/c.c" "$tmp/links/d.c"
expect_status 0 compile examples/layernorm.bfk -o "$tmp/links/c.c"
"$BFSYNC" compile examples/layernorm.bfk -o "$tmp/links/e.c" && cmp -s "$tmp/links/d.c" "$tmp/links/e.c" ||
  fail "compile -o through a hard link"

# compile --resources -p with a huge parameter says what it measures.
expect_status 1 compile examples/softmax.bfk --resources -p R=100000000000 &&
  expect_stderr "--resources -p measures the kernel on a run at these parameters"
# make install into a prefix with a space, an & and a quote: everything
# lands there, nothing elsewhere, and the installed bfsync runs a kernel.
san_flags=""
if nm "$BUILD/libbfrt.a" 2>/dev/null | grep __asan >/dev/null; then san_flags=1; fi
mkdir "$tmp/inst"
prefix="$tmp/inst/in stall&x'y"
(cd "$tmp" && make --no-print-directory -s -C "$OLDPWD" install BUILD="$BUILD" ${san_flags:+SAN=1 OPT=-O1} PREFIX="$prefix") \
  >"$tmp/install.log" 2>&1 || { fail "make install with PREFIX=$prefix"; head -5 "$tmp/install.log" >&2; }
for f in bin/bfsync include/bfsync/bfrt.h lib/libbfrt.a lib/pkgconfig/bfrt.pc; do
  [ -e "$prefix/$f" ] || fail "make install did not install $prefix/$f"
done
grep -qxF "prefix=$prefix" "$prefix/lib/pkgconfig/bfrt.pc" || fail "bfrt.pc: $(grep prefix= "$prefix/lib/pkgconfig/bfrt.pc")"
[ "$(ls "$tmp/inst" | wc -l)" = 1 ] || fail "make install made stray folders: $(ls "$tmp/inst")"
"$prefix/bin/bfsync" run examples/chain.bfk >/dev/null 2>"$tmp/err" || fail "the installed bfsync: $(head -3 "$tmp/err")"

# --trace is written also when the run failed: a deadlock (threads and the
# simulator), a race the checker found; with --sync=both, the mode that ran.
for args in "--mutate=raise:2" "--exec=sim --mutate=raise:2" "--check --mutate=drop:1" "--sync=both --mutate=raise:1"; do
  rm -f "$tmp/t.json"
  # shellcheck disable=SC2086
  expect_status 1 run examples/chain.bfk --trace "$tmp/t.json" $args &&
    expect_stderr "bfsync: the trace of the run until it failed is in $tmp/t.json"
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['traceEvents']" "$tmp/t.json" ||
    fail "run $args: no trace after the failure"
done

finish

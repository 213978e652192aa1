# frontend.sh: the frontend from the command line.
#
# 1. Golden diagnostics: `bfsync check tests/bad/NAME.bfk` must print nothing
#    on stdout, and its stderr plus exit status must equal
#    tests/golden/errors/NAME.err (rewritten when UPDATE=1; review the diff).
# 2. fmt round trips: for every examples/*.bfk and tests/kernels/*.bfk, the
#    output of fmt checks cleanly and fmt of it is identical.
# 3. The command line: exit statuses 0, 1 and 2, --help, unreadable files.
set -u
source "$(dirname "$0")/lib.sh"

# ---- 1. Golden diagnostics.
mkdir -p tests/golden/errors
for bad in tests/bad/*.bfk; do
  name=$(basename "$bad" .bfk)
  golden=tests/golden/errors/$name.err
  "$BFSYNC" check "$bad" >"$tmp/out" 2>"$tmp/err"
  echo "exit status: $?" >>"$tmp/err"
  [ -s "$tmp/out" ] && fail "$bad: check printed on stdout"
  golden "$tmp/err" "$golden" "the diagnostics of $bad"
done
for golden in tests/golden/errors/*.err; do
  [ -f "$golden" ] || continue
  [ -f "tests/bad/$(basename "$golden" .err).bfk" ] || fail "$golden has no tests/bad input"
done

# ---- 2. fmt round trips.
for kernel in examples/*.bfk tests/kernels/*.bfk; do
  [ -f "$kernel" ] || continue
  if ! "$BFSYNC" fmt "$kernel" >"$tmp/once.bfk" 2>"$tmp/err"; then
    fail "fmt $kernel failed:"
    head -5 "$tmp/err" >&2
    continue
  fi
  "$BFSYNC" check "$tmp/once.bfk" || fail "fmt $kernel does not check"
  "$BFSYNC" fmt "$tmp/once.bfk" >"$tmp/twice.bfk" || fail "fmt of fmt $kernel failed"
  cmp -s "$tmp/once.bfk" "$tmp/twice.bfk" || fail "fmt of fmt $kernel differs from fmt"
done
# The examples are what users copy: each is in canonical form already.
"$BFSYNC" fmt --check examples/*.bfk || fail "an example is not in canonical form (bfsync fmt --check)"

# fmt -i rewrites a file in place, and only then is fmt --check content.
sed 's/^  hbm in X/  hbm in   X/' examples/layernorm.bfk >"$tmp/ln.bfk"
"$BFSYNC" fmt --check "$tmp/ln.bfk" 2>"$tmp/err"; [ $? = 1 ] || fail "fmt --check passed a file not in canonical form"
grep -q "ln.bfk: not in canonical form" "$tmp/err" || fail "fmt --check does not name the file"
"$BFSYNC" fmt -i "$tmp/ln.bfk" && "$BFSYNC" fmt --check "$tmp/ln.bfk" && cmp -s "$tmp/ln.bfk" examples/layernorm.bfk ||
  fail "fmt -i did not rewrite the file into canonical form"
"$BFSYNC" fmt -i --check "$tmp/ln.bfk" 2>/dev/null; [ $? = 2 ] || fail "fmt -i --check is not a usage error"
"$BFSYNC" fmt "$tmp/ln.bfk" "$tmp/ln.bfk" 2>/dev/null; [ $? = 2 ] || fail "fmt of two files to stdout is not a usage error"
# --target: the engines are the target's (round has act, dma, dma1).
"$BFSYNC" check --target tests/sim/round.target examples/softmax.bfk 2>"$tmp/err"; [ $? = 1 ] ||
  fail "check --target accepted dve on a target without it"
grep -q "unknown engine 'dve' (target round has act, dma, dma1)" "$tmp/err" || fail "check --target: wrong message"
"$BFSYNC" check --target tests/sim/round.target tests/sim/pipe.bfk || fail "check --target rejected a kernel of its target"
# A `// target: FILE` line (relative to the kernel's folder) stands for --target.
mkdir -p "$tmp/tl" && cp tests/sim/round.target "$tmp/tl/" && { echo "// target: round.target"; cat tests/sim/pipe.bfk; } >"$tmp/tl/k.bfk"
"$BFSYNC" check "$tmp/tl/k.bfk" || fail "check did not use the kernel's // target: line"
"$BFSYNC" fmt "$tmp/tl/k.bfk" >/dev/null || fail "fmt did not use the kernel's // target: line"
{ echo "// target: round.target"; cat examples/softmax.bfk; } >"$tmp/tl/s.bfk"
"$BFSYNC" check "$tmp/tl/s.bfk" 2>/dev/null && fail "the // target: line was ignored (round has no dve)"
"$BFSYNC" check --target targets/trn1.target "$tmp/tl/s.bfk" || fail "--target did not override the // target: line"
{ echo "// target: missing.target"; cat tests/sim/pipe.bfk; } >"$tmp/tl/m.bfk"
"$BFSYNC" check "$tmp/tl/m.bfk" 2>"$tmp/err"; [ $? = 1 ] && grep -q "cannot open target file .*/tl/missing.target" "$tmp/err" ||
  fail "a // target: line naming a missing file is not an error"
grep -q "missing.target: No such file or directory" "$tmp/err" && grep -q "m.bfk:1:12: note: the kernel's target, named here" "$tmp/err" ||
  fail "a missing // target: file: no reason, or no place in the kernel: $(cat "$tmp/err")"
# A second `// target:` line, and one naming no file, are errors at the line
# (the second was ignored, the empty one too).
{ echo "// target: round.target"; echo "// target: ../../targets/trn1.target"; cat tests/sim/pipe.bfk; } >"$tmp/tl/two.bfk"
"$BFSYNC" check "$tmp/tl/two.bfk" 2>"$tmp/err"; [ $? = 1 ] && grep -q "two.bfk:2:12: error: a second \`// target:\` line" "$tmp/err" ||
  fail "a second // target: line is not an error: $(cat "$tmp/err")"
{ echo "// target: "; cat tests/sim/pipe.bfk; } >"$tmp/tl/none.bfk"
"$BFSYNC" fmt "$tmp/tl/none.bfk" >/dev/null 2>"$tmp/err"; [ $? = 1 ] && grep -q "none.bfk:1:1: error: this \`// target:\` line names no file" "$tmp/err" ||
  fail "a // target: line naming no file is not an error: $(cat "$tmp/err")"

# Trailing comments keep their column when the code leaves room, so a
# column of comments stays aligned; code too long for it pushes its comment
# to two spaces after it.
printf 'kernel k() {
  sbuf t:  f32[4,4];      // one
  sbuf uu: f32[4, 4];     // two
  sbuf v: f32[4, 4]; // three
  sbuf longer_name_here: f32[4, 4]; // four
}
' >"$tmp/align.bfk"
printf 'kernel k() {
  sbuf t: f32[4, 4];      // one
  sbuf uu: f32[4, 4];     // two
  sbuf v: f32[4, 4];  // three
  sbuf longer_name_here: f32[4, 4];  // four
}
' >"$tmp/aligned.bfk"
"$BFSYNC" fmt "$tmp/align.bfk" >"$tmp/out.bfk" 2>&1 && cmp -s "$tmp/out.bfk" "$tmp/aligned.bfk" ||
  { fail "fmt does not keep trailing comments aligned:"; diff "$tmp/aligned.bfk" "$tmp/out.bfk" >&2; }

# ---- bfsync ops: every op of runtime/ops.def, with the target's engines.
if "$BFSYNC" ops >"$tmp/ops" 2>"$tmp/err"; then
  for op in $(sed -n 's/^OP([A-Z_]*, *"\([a-z_]*\)".*/\1/p' runtime/ops.def | sort -u); do
    grep -q "^$op " "$tmp/ops" || fail "bfsync ops does not list '$op'"
  done
  grep -q '^add  *d, s, f  *act, dve, pool ' "$tmp/ops" || fail "bfsync ops lacks add with an immediate on act, dve, pool"
  grep -q '^gelu  *d, s  *act ' "$tmp/ops" || fail "bfsync ops lacks gelu on act"
  # the sixteen DMA queues of trn1 are one engine kind, and the lines stay short
  grep -q '^load  *d, X\[r, c\]  *dma queues  *dma ' "$tmp/ops" || fail "bfsync ops does not show load on the dma queues"
  ! grep -q 'dma1[0-9]*,' "$tmp/ops" || fail "bfsync ops lists the DMA queues one by one"
  awk 'length($0) > 100 { exit 1 }' "$tmp/ops" || fail "bfsync ops prints a line over 100 columns"
  grep -q '^nc_matmul  *d, st, mv  *pe  *matmul  *sum' "$tmp/ops" || fail "bfsync ops lacks nc_matmul"
else
  fail "bfsync ops exited $?"
fi
"$BFSYNC" ops --target tests/sim/round.target >/dev/null 2>&1 || fail "bfsync ops --target failed"
"$BFSYNC" ops stray >/dev/null 2>&1; [ $? = 2 ] || fail "bfsync ops with an operand is not a usage error"

# ---- 3. The command line.
good=$tmp/good.bfk
printf 'kernel k(N: int) {\n  sbuf t: f32[4, 4];\n  for i in 0 .. N { dve: fill t, 1; }\n}\n' >"$good"

expect_status 0 check "$good"
[ -s "$tmp/out" ] || [ -s "$tmp/err" ] && fail "check of a clean kernel printed something"
expect_status 0 check "$good" "$good"
expect_status 1 check "$good" tests/bad/names.bfk
expect_status 1 check "$tmp/no-such-file.bfk"
grep -q "cannot read '$tmp/no-such-file.bfk'" "$tmp/err" || fail "unreadable file: no message"
expect_status 1 check "$tmp"
expect_status 2 check
expect_status 2 check --frobnicate "$good"
expect_status 0 check --help
grep -q "usage: bfsync check" "$tmp/out" || fail "check --help does not print its usage on stdout"
expect_status 0 check -- "$good"
"$BFSYNC" check - <"$good" || fail "check - (standard input) failed"
"$BFSYNC" check - <tests/bad/names.bfk 2>"$tmp/err" && fail "check - accepted a bad kernel"
grep -q "^<stdin>:2:26: error: duplicate name 'N'" "$tmp/err" || fail "check - does not name <stdin>"
expect_status 0 fmt "$good"
grep -q "^  for i in 0 .. N {$" "$tmp/out" || fail "fmt output lacks the loop"
expect_status 1 fmt tests/bad/names.bfk
[ -s "$tmp/out" ] && fail "fmt printed a kernel with errors"
expect_status 2 fmt
expect_status 2 fmt "$good" "$good"
expect_status 0 fmt --help
grep -q "usage: bfsync fmt" "$tmp/out" || fail "fmt --help does not print its usage on stdout"

finish

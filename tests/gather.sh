#!/usr/bin/env bash
# gather.sh: gather and scatter DMA by index (X[IDX[r0:r1, c], c0:c1]).
#  - tests/kernels/gather.bfk at every `// params:` line: the oracle finds
#    no race, no early and no late wait, none explained by a fallback
#    (each consumer of Y waits for exactly the transfers that touched its
#    rows: a whole-tensor wait would be late), and --explain names none;
#    `run --sync=both --jitter --check` matches both references with no
#    race on threads, and `--check` in the simulator;
#  - raising any of its waits by one is caught (each threshold is exact),
#    and dropping the wait of the gather that reads what a scatter wrote is
#    caught by the oracle and by the race checker;
#  - duplicate indices, from given inputs: a gather reads a row twice, a
#    scatter writes a row twice and the later partition's row stays, as a
#    Python model of the kernel says (independently of bfsync's
#    references), for Y and Z;
#  - an index outside its tensor stops the run naming the line, the tensor
#    and the index: the runtime (threads and the simulator's timing-only
#    run, which has no reference), the references and the oracle;
#  - the rows a scatter's indices miss are reported as never stored
#    (tests/bad_run/gather_unstored.bfk);
#  - the emitted C, through gcc -pedantic and linked with libbfrt.a, gives
#    bfsync run's results.
# No golden files: UPDATE=1 skips it.
set -u
if [[ -n ${UPDATE:-} ]]; then echo "gather.sh: no golden files to update"; exit 0; fi
source "$(dirname "$0")/lib.sh"
k=tests/kernels/gather.bfk

# ---- Exact synchronization under data-dependent addressing.
"$BFSYNC" verify "$k" --all-params >"$tmp/verify" 2>&1 || fail "verify $k: $(head -5 "$tmp/verify")"
[ "$(grep -c 'races 0, early 0, late 0 (+0 explained by a fallback), deadlocks 0' "$tmp/verify")" = 4 ] ||
  fail "verify $k: not exact at every params line: $(grep races "$tmp/verify")"
"$BFSYNC" compile --explain "$k" >"$tmp/explain" 2>&1 || fail "compile --explain $k"
grep -q fallback "$tmp/explain" && fail "$k: a wait falls back: $(grep fallback "$tmp/explain" | head -2)"
grep -q 'rows(Y: IDX\[t, 0 +p\] +: 8' "$tmp/explain" || fail "$k: the scatter's waits are not per row"
for t in 0 1 3 5; do
  for exec in threads sim; do
    jitter=$([ $exec = threads ] && echo --jitter)
    "$BFSYNC" run "$k" -p T=$t --sync=both $jitter --check --exec=$exec >"$tmp/run" 2>&1 ||
      fail "run $k T=$t --exec=$exec: $(tail -3 "$tmp/run")"
    [ "$(grep -cE '^(barrier|barrier-free) +yes .*races 0$' "$tmp/run")" = 2 ] ||
      fail "run $k T=$t --exec=$exec: $(tail -2 "$tmp/run")"
  done
done

# ---- Every threshold exact; a dropped wait caught by the oracle and the race checker.
nwaits=$("$BFSYNC" compile --emit=ir "$k" | grep -c 'wait ')
for ((i = 0; i < nwaits; i++)); do
  "$BFSYNC" verify "$k" -p T=5 --mutate=raise:$i >/dev/null 2>&1 && fail "verify $k --mutate=raise:$i passed"
done
raw=$("$BFSYNC" compile --emit=ir "$k" | grep 'wait ' | grep -n 'RAW, line 28 <- line 27' | cut -d: -f1)
if [ -z "$raw" ]; then
  fail "$k: no wait of the gather (line 28) for the scatter (line 27)"
else
  "$BFSYNC" verify "$k" -p T=5 --mutate=drop:$((raw - 1)) >"$tmp/out" 2>&1 && fail "verify --mutate=drop:$((raw - 1)) passed"
  "$BFSYNC" run "$k" -p T=5 --check --mutate=drop:$((raw - 1)) >"$tmp/out" 2>&1
  grep -qE 'races [1-9]|not ordered by any wait' "$tmp/out" || fail "the race checker misses the dropped wait: $(tail -3 "$tmp/out")"
fi

# ---- Duplicate indices: the later partition's row stays.
BFSYNC="$BFSYNC" K="$k" DIR="$tmp" python3 - <<'PY' || fail "duplicate indices do not follow the documented order"
import os, random, struct, subprocess, sys
d, T = os.environ["DIR"], 3
def npy(path, descr, rows, cols, data):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, rows, cols)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    fmt = "<%d%s" % (len(data), "i" if descr == "<i4" else "f")
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack(fmt, *data))
def read(path, n):
    b = open(path, "rb").read()
    return list(struct.unpack("<%df" % n, b[10 + struct.unpack("<H", b[8:10])[0]:]))
def f32(x): return struct.unpack("<f", struct.pack("<f", x))[0]
rnd = random.Random(7)
X = [[f32(rnd.uniform(-2, 2)) for _ in range(16)] for _ in range(8 * T)]
Y = [[f32(rnd.uniform(-2, 2)) for _ in range(16)] for _ in range(5)]
IDX = [[0, 0, 1, 4, 1, 2, 4, 0], [3, 3, 3, 3, 3, 3, 3, 2], [4, 3, 2, 1, 0, 4, 3, 2]]
JDX = [[0, 4, 3], [0, 4, 3], [1, 1, 3], [2, 0, 3], [3, 2, 3], [4, 2, 0], [2, 3, 1], [1, 0, 4]]
npy(d + "/X.npy", "<f4", 8 * T, 16, [v for r in X for v in r])
npy(d + "/Y.npy", "<f4", 5, 16, [v for r in Y for v in r])
npy(d + "/IDX.npy", "<i4", T, 8, [v for r in IDX for v in r])
npy(d + "/JDX.npy", "<i4", 8, T, [v for r in JDX for v in r])
for sync in ("barrier-free", "barrier"):
    subprocess.run([os.environ["BFSYNC"], "run", os.environ["K"], "-p", "T=%d" % T, "--sync=" + sync, "--jitter", "--check",
                    "--input", "X=" + d + "/X.npy", "--input", "Y=" + d + "/Y.npy", "--input", "IDX=" + d + "/IDX.npy",
                    "--input", "JDX=" + d + "/JDX.npy", "--output", "Y=" + d + "/Yo.npy", "--output", "Z=" + d + "/Zo.npy"],
                   check=True, capture_output=True)
    y, z = [r[:] for r in Y], []
    for t in range(T):
        x = [[f32(v * v) for v in X[8 * t + p]] for p in range(8)]
        for p in range(8): y[IDX[t][p]] = x[p][:]            # in partition order: the later one stays
        g = [y[JDX[p][t]][:] for p in range(8)]               # a gather reads a duplicated row twice
        z += g
        for p in range(8): y[JDX[p][t]][0:8] = g[p][8:16]
    if read(d + "/Yo.npy", 5 * 16) != [v for r in y for v in r] or read(d + "/Zo.npy", 8 * T * 16) != [v for r in z for v in r]:
        print("gather.bfk %s: Y or Z differs from the model" % sync)
        sys.exit(1)
PY

# ---- An index outside its tensor.
want="kernel goob, line 14: load from Y: index IDX[0, 0] = 2 (partition 0) is outside the tensor's rows 0:2"
for exec in threads sim; do
  "$BFSYNC" run tests/bad_run/gather_oob.bfk -p N=1 --sync=both --exec=$exec >/dev/null 2>"$tmp/err" && fail "gather_oob ran"
  grep -qF "$want" "$tmp/err" || fail "gather_oob --exec=$exec: $(cat "$tmp/err")"
done
"$BFSYNC" run tests/bad_run/gather_oob.bfk -p N=1 --exec=sim --timing-only >/dev/null 2>"$tmp/err" && fail "gather_oob ran (timing only)"
grep -qF "$want" "$tmp/err" || fail "gather_oob in the runtime: $(cat "$tmp/err")"
"$BFSYNC" verify tests/bad_run/gather_oob.bfk -p N=1 >/dev/null 2>"$tmp/err" && fail "gather_oob verified"
grep -qF "gather_oob.bfk:14:18: error: load from Y: index IDX[0, 0] = 2 (partition 0) is outside the tensor's rows 0:2" "$tmp/err" ||
  fail "gather_oob in the oracle: $(cat "$tmp/err")"

# ---- The emitted C through gcc (bfrt_rows_max, bfrt_rows_store), linked with
# libbfrt.a and tests/host_main.c: the same Y and Z as bfsync run.
san_flags=""
if nm "$BUILD/libbfrt.a" 2>/dev/null | grep __asan >/dev/null; then san_flags="-fsanitize=address,undefined"; fi
"$BFSYNC" compile "$k" -o "$tmp/gather.c" || fail "compile $k"
if gcc -std=c99 -Wall -Wextra -Werror -pedantic -Iruntime -c "$tmp/gather.c" -o "$tmp/gather.o" 2>"$tmp/gcc.err" &&
  gcc -std=c11 $san_flags -rdynamic -I. -Iruntime tests/host_main.c "$tmp/gather.o" "$BUILD/libbfrt.a" -ldl -lpthread -lm \
    -o "$tmp/host" 2>>"$tmp/gcc.err"; then
  mkdir -p "$tmp/h" "$tmp/r"
  "$tmp/host" bfk_gather_barrier_free 7 "$tmp/h" 3 || fail "$k built by gcc failed"
  "$BFSYNC" run "$k" -p T=3 --seed 7 --output Y="$tmp/r/Y.npy" --output Z="$tmp/r/Z.npy" >/dev/null 2>&1 || fail "run $k --seed 7"
  python3 - "$tmp/h" "$tmp/r" <<'PY' || fail "$k: gcc-built results differ from bfsync run"
import sys
h, r = sys.argv[1], sys.argv[2]
for t in ("Y", "Z"):
    npy = open("%s/%s.npy" % (r, t), "rb").read()
    assert npy[10 + (npy[8] | npy[9] << 8):] == open("%s/%s.f32" % (h, t), "rb").read(), t
PY
else
  fail "gcc rejects the emitted C of $k: $(head -3 "$tmp/gcc.err")"
fi

# ---- Never stored: the rows a scatter's indices miss.
python3 - "$tmp/idx.npy" <<'PY'
import struct, sys
h = "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 4), }"
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<4i", 0, 0, 2, 5))
PY
"$BFSYNC" run tests/bad_run/gather_unstored.bfk -p T=1 --input IDX="$tmp/idx.npy" >/dev/null 2>"$tmp/err" && fail "gather_unstored ran"
grep -qF "kernel uns, line 6: 48 of the 96 elements of out tensor Y are never stored, the first at [1, 0]" "$tmp/err" ||
  fail "gather_unstored: $(cat "$tmp/err")"

finish

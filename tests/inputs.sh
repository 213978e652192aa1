#!/usr/bin/env bash
# inputs.sh: bad input and output files: bad input never crashes, hangs, loses a file or is silently
# misread (issue 9's input and safety defects, one check each):
#  - tensor sizes: byte sizes that overflow 64 bits, and tensors larger
#    than the memory limit, are user errors naming the size and the limit,
#    before anything is allocated; so is a .npy header claiming 2^40 rows;
#  - parameters: any number of them (70 here), names of any length;
#  - output files: written atomically (two concurrent runs leave one whole
#    file, no temporary left), two outputs to one file rejected, compile
#    refusing to overwrite its input, write failures saying why;
#  - numbers: one parser and one range error for every option;
#  - the source: a UTF-8 byte order mark, a file over the size limit, a
#    flat sum over the depth limit;
#  - campaign: its scratch directory removed on SIGTERM.
# No golden files: UPDATE=1 skips it.
set -u
if [[ -n ${UPDATE:-} ]]; then echo "inputs.sh: no golden files to update"; exit 0; fi
source "$(dirname "$0")/lib.sh"
# expect STATUS TEXT bfsync-args...: the exit status, TEXT on stderr, no internal error.
expect() {
  local want=$1 text=$2
  shift 2
  "$BFSYNC" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [[ $got == "$want" ]] || { fail "bfsync $* exited $got, not $want: $(head -c 300 "$tmp/err")"; return 1; }
  [[ -z $text ]] || grep -qF -- "$text" "$tmp/err" || { fail "bfsync $*: stderr lacks '$text': $(head -c 300 "$tmp/err")"; return 1; }
  ! grep -q "internal error" "$tmp/err" || { fail "bfsync $*: internal error"; return 1; }
}

# ---- Tensor sizes.
cat >"$tmp/big.bfk" <<'K'
kernel big(N: int) {
  hbm in X: f32[N, 1];
  hbm out Y: f32[N, 1];
  sbuf t: f32[1, 1];
  dma: load t, X[0, 0];
  dma: store Y[0, 0], t;
}
K
expect 1 "tensor X [4611686018427387904, 1] is too large: its size in bytes overflows 64 bits" \
  run "$tmp/big.bfk" -p N=4611686018427387904
expect 1 "the limit is" run "$tmp/big.bfk" -p N=10000000000 # 40 GB each: over a quarter of any test machine
expect 1 "the limit is" run "$tmp/big.bfk" -p N=1099511627776 --exec=sim
# The tiles count too: 2,048 tiles of 2^26 cells each (512 GiB), on a target
# with no [limits] to stop them, once aborted with "internal error: out of memory".
python3 - "$tmp/tiles.bfk" <<'PY'
import sys
tiles = "".join(f"  sbuf t{i}: f32[128, 524288];\n" for i in range(2048))
open(sys.argv[1], "w").write("kernel tiles(N: int) {\n  hbm in X: f32[1, 1];\n  hbm out Y: f32[1, 1];\n" + tiles +
    "  sbuf s: f32[1, 1];\n  dma: load s, X[0, 0];\n  dma: store Y[0, 0], s;\n}\n")
PY
# (Under a 16 GB address-space cap, so that a regression fails instead of
# paging the machine to death; not under ASan, whose shadow needs more.)
printf '#!/usr/bin/env bash\nulimit -v 16000000\nexec "%s" "$@"\n' "$BFSYNC" >"$tmp/capped" && chmod +x "$tmp/capped"
capped=$tmp/capped
ldd "$BFSYNC" | grep -q libasan && capped=$BFSYNC
BFSYNC=$capped expect 1 "the run needs 3298534883458 bytes for its tensors (the largest, X [1, 1], has 4 bytes of f32) and its 137438953473 tile elements" \
  run "$tmp/tiles.bfk" -p N=1 --target tests/sim/round.target
# And the limit counts every copy a run keeps (53 bytes a tensor element,
# with the f64 reference's): it once counted four f32 copies, so a tensor
# of memory / 30 elements passed and the run took 1.8 times the memory.
printf "kernel one(N: int) {\n  hbm inout Z: f32[N, 1];\n  sbuf t: f32[1, 1];\n  dma: load t, Z[0, 0];\n  dma: store Z[0, 0], t;\n}\n" >"$tmp/one.bfk"
BFSYNC=$capped expect 1 "53 bytes a tensor element" run "$tmp/one.bfk" -p N=$(( $(getconf _PHYS_PAGES) * $(getconf PAGESIZE) / 30 ))
printf "kernel c() {\n  hbm out Y: f32[4611686018427387904, 1];\n  sbuf t: f32[1, 1];\n  dma: store Y[0, 0], t;\n}\n" >"$tmp/const.bfk"
expect 1 "is more than 2^63 bytes" check "$tmp/const.bfk"
# A .npy header claiming 2^40 rows, through a pipe (no file size to check it against).
python3 - "$tmp/huge.npy" <<'PY'
import struct, sys
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 96), }"
d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + b"\0" * 64)
PY
"$BFSYNC" run examples/softmax.bfk -p R=1 --input X=/dev/stdin <"$tmp/huge.npy" >/dev/null 2>"$tmp/err"
[[ $? == 1 ]] && grep -q "shape (1099511627776, 96) does not match tensor X \[32, 96\]" "$tmp/err" ||
  fail "a .npy header claiming 2^40 rows: $(cat "$tmp/err")"

# ---- Parameters: 70 of them, one with a 100-character name; the last one sizes Y.
long=P$(printf 'x%.0s' {1..99})
{
  printf "kernel many("
  for i in $(seq 1 69); do printf "P%d: int, " "$i"; done
  printf "%s: int) {\n  hbm out Y: f32[%s, 1];\n  sbuf t: f32[1, 1];\n" "$long" "$long"
  printf "  for i in 0 .. %s { dve: fill t, 1; dma: store Y[i, 0], t; }\n}\n" "$long"
} >"$tmp/many.bfk"
args=()
for i in $(seq 1 69); do args+=(-p "P$i=$i"); done
args+=(-p "$long=5")
if expect 0 "" run "$tmp/many.bfk" "${args[@]}" --json; then
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["params"]["P69"] == 69 and d["params"][sys.argv[2]] == 5, d["params"]
assert d["instructions"] == 10, d' "$tmp/out" "$long" || fail "70 parameters were not all applied"
fi
expect 2 "missing parameter '$long'" run "$tmp/many.bfk" "${args[@]:0:138}"
# Long names sharing a 45-character prefix: distinct in the emitted C too.
a=$(printf 'a%.0s' {1..45})
cat >"$tmp/long.bfk" <<K
kernel k(${a}1: int, ${a}2: int) {
  hbm in ${a}X: f32[${a}1, 1];
  hbm out ${a}Y: f32[${a}2, 1];
  sbuf ${a}t: f32[1, 1];
  sbuf ${a}u: f32[1, 1];
  dma: load ${a}t, ${a}X[0, 0];
  dve: copy ${a}u, ${a}t;
  dma: store ${a}Y[0, 0], ${a}u;
}
K
# (Y is one row, all of it stored: run checks that out tensors are written whole.)
expect 0 "" run "$tmp/long.bfk" -p "${a}1=2" -p "${a}2=1" --sync=both

# ---- Output files.
k=examples/softmax.bfk
expect 2 "two tensors would be written to '$tmp/o.npy'" run "$k" -p R=1 --output Y="$tmp/o.npy" --output X="$tmp/o.npy"
expect 2 "two tensors would be written" run "$k" -p R=1 --output Y="$tmp/o.npy" --output X="$tmp/../$(basename "$tmp")/o.npy"
expect 2 "--output: 'Y' given twice" run "$k" -p R=1 --output Y="$tmp/a.npy" --output Y="$tmp/b.npy"
[[ -e $tmp/o.npy ]] && fail "a rejected run wrote an output"
cp "$k" "$tmp/k.bfk"
expect 2 "--output: $tmp/k.bfk would overwrite the kernel file" run "$tmp/k.bfk" -p R=1 --output Y="$tmp/k.bfk"
expect 2 "--trace $tmp/k.bfk would overwrite the kernel file" run "$tmp/k.bfk" -p R=1 --trace "$tmp/k.bfk"
expect 2 "would overwrite the input file" compile "$tmp/k.bfk" -o "$tmp/k.bfk"
expect 2 "would overwrite the input file" compile "$tmp/k.bfk" -o "$tmp/./k.bfk"
cmp -s "$k" "$tmp/k.bfk" || fail "compile -o overwrote its input"
# No output replaces a file the command reads: another tensor's --input
# (once overwritten by --output Y=x.npy after --input X=x.npy), the
# --target file, or another output; a tensor's output over its own input
# (an inout updated in place) stays allowed.
cp targets/trn1.target "$tmp/t.target"
"$BFSYNC" run "$k" -p R=1 --output X="$tmp/xin.npy" >/dev/null && cp "$tmp/xin.npy" "$tmp/xin.keep"
expect 2 "--output: $tmp/xin.npy would overwrite another tensor's --input file" run "$k" -p R=1 --input X="$tmp/xin.npy" --output Y="$tmp/xin.npy"
expect 2 "--trace $tmp/xin.npy would overwrite an --input file" run "$k" -p R=1 --input X="$tmp/xin.npy" --trace "$tmp/xin.npy"
expect 2 "--output: $tmp/tr.json is the --trace file too" run "$k" -p R=1 --output Y="$tmp/tr.json" --trace "$tmp/tr.json"
expect 2 "--output: $tmp/t.target would overwrite the target file" run "$k" -p R=1 --target "$tmp/t.target" --output Y="$tmp/t.target"
expect 2 "--trace $tmp/t.target would overwrite the target file" run "$k" -p R=1 --target "$tmp/t.target" --trace "$tmp/t.target"
expect 2 "-o $tmp/t.target would overwrite the target file" compile "$k" --target "$tmp/t.target" -o "$tmp/t.target"
cmp -s "$tmp/xin.npy" "$tmp/xin.keep" || fail "an output overwrote another tensor's --input file"
cmp -s "$tmp/t.target" targets/trn1.target || fail "an output overwrote the --target file"
expect 0 "" run "$k" -p R=1 --input X="$tmp/xin.npy" --output X="$tmp/xin.npy"
expect 1 "cannot write '/nonexistent/k.c': No such file or directory" compile "$k" -o /nonexistent/k.c
expect 1 "No such file or directory" run "$k" -p R=1 --output Y=/nonexistent/y.npy
"$BFSYNC" compile "$k" >/dev/full 2>"$tmp/err" && fail "compile to a full disk succeeded"
grep -q "No space left on device" "$tmp/err" || fail "a write to a full disk does not say why: $(cat "$tmp/err")"
# Two runs writing one file: one of the two whole files results, and no temporary is left.
"$BFSYNC" run "$k" -p R=64 --seed 1 --output Y="$tmp/y1.npy" >/dev/null &&
  "$BFSYNC" run "$k" -p R=64 --seed 2 --output Y="$tmp/y2.npy" >/dev/null || fail "softmax R=64"
for round in 1 2 3; do
  "$BFSYNC" run "$k" -p R=64 --seed 1 --output Y="$tmp/y.npy" >/dev/null &
  "$BFSYNC" run "$k" -p R=64 --seed 2 --output Y="$tmp/y.npy" >/dev/null &
  wait
  cmp -s "$tmp/y.npy" "$tmp/y1.npy" || cmp -s "$tmp/y.npy" "$tmp/y2.npy" || fail "two runs writing one file mixed it (round $round)"
done
ls "$tmp" | grep -q "tmp-" && fail "a temporary output file was left behind"
# What an output replaces keeps what it was: a file its mode, a symbolic
# link its link (the file it names is written), and a pipe or device stays
# itself, written in place (an output renamed over /dev/null once replaced
# the machine's /dev/null with a file).
mkdir "$tmp/w"
cp "$k" "$tmp/w/mode.bfk" && chmod 640 "$tmp/w/mode.bfk" && printf '\n' >>"$tmp/w/mode.bfk"
expect 0 "" fmt -i "$tmp/w/mode.bfk"
[[ $(stat -c %a "$tmp/w/mode.bfk") == 640 ]] || fail "fmt -i changed a file's mode 640 to $(stat -c %a "$tmp/w/mode.bfk")"
cp "$tmp/w/mode.bfk" "$tmp/w/real.bfk" && printf '\n' >>"$tmp/w/real.bfk" && ln -s real.bfk "$tmp/w/link.bfk"
expect 0 "" fmt -i "$tmp/w/link.bfk"
[[ -L $tmp/w/link.bfk ]] || fail "fmt -i replaced a symbolic link with a file"
cmp -s "$tmp/w/real.bfk" "$tmp/w/mode.bfk" || fail "fmt -i through a symbolic link did not format the file it names"
ln -s sub/new.c "$tmp/w/dangling.c" && mkdir "$tmp/w/sub"
expect 0 "" compile "$k" -o "$tmp/w/dangling.c"
[[ -L $tmp/w/dangling.c && -s $tmp/w/sub/new.c ]] || fail "compile -o a dangling link did not create the file it names"
mkfifo "$tmp/w/pipe"
timeout 20 cat "$tmp/w/pipe" >"$tmp/w/piped.c" &
expect 0 "" compile "$k" -o "$tmp/w/pipe"
wait
[[ -p $tmp/w/pipe ]] || fail "compile -o a named pipe replaced it with a file"
grep -q "bfk_softmax" "$tmp/w/piped.c" || fail "compile -o a named pipe did not write into it"
expect 1 "cannot write '$tmp/w': Is a directory" run "$k" -p R=1 --output Y="$tmp/w"
ls "$tmp/w" | grep -q "tmp-" && fail "a temporary output file was left behind in $tmp/w"

# ---- Numbers: one parser, one range error.
range="needs an integer from 0 to 18446744073709551615, not '99999999999999999999999'"
expect 2 "--seed $range" run "$k" -p R=1 --seed 99999999999999999999999
expect 2 "--seed $range" gen --seed 99999999999999999999999
expect 2 "--seed $range" verify "$k" -p R=1 --seed 99999999999999999999999
expect 2 "--from needs an integer from 0 to 9223372036854775807, not '9999999999999999999'" campaign --from 9999999999999999999
expect 2 "--jobs needs an integer from 1 to 64" campaign --jobs 65
expect 2 "--mutate must be drop:K, lower:K or raise:K" campaign --mutate=flip:1

# ---- The source.
printf '\xef\xbb\xbfkernel k() {\n  sbuf t: f32[1, 1];\n  dve: fill t, 1;\n}\n' >"$tmp/bom.bfk"
expect 0 "" check "$tmp/bom.bfk"
printf 'kernel k() {\n  sbuf t: f32[1, 1];\xef\xbb\xbf\n  dve: fill t, 1;\n}\n' >"$tmp/bom2.bfk"
expect 1 "a UTF-8 byte order mark is allowed only at the start of the file" check "$tmp/bom2.bfk"
expect 1 "'/dev/zero' is larger than 256 MiB, the limit for a kernel file" check /dev/zero
{
  printf "kernel k(N: int) {\n  sbuf t: f32[1, 1];\n  for i in 0 .. N"
  for i in $(seq 1 1000); do printf " + N"; done
  printf " { dve: fill t, 1; }\n}\n"
} >"$tmp/sum.bfk"
expect 1 "expression too deep: more than 1000 levels (each operator and each pair of parentheses is a level" check "$tmp/sum.bfk"

# ---- bf16 and fp8e4 files (docs/runtime.md, "The .npy contract"): bit
# patterns in '<u2' and '|u1', float32 rounded to nearest even, and a
# positioned refusal of any other dtype. Files are made without numpy.
cat >"$tmp/types.bfk" <<'K'
kernel types(N: int) {
  hbm in X: bf16[2, 4];
  hbm out Y: bf16[2, 4];
  hbm out Z: fp8e4[2, 4];
  hbm out F: f32[2, 4];
  sbuf x: bf16[2, 4];
  sbuf e: fp8e4[2, 4];
  sbuf f: f32[2, 4];
  dma: load x, X[0, 0];
  dma: store Y[0, 0], x;
  dve: copy e, x;
  dma: store Z[0, 0], e;
  dve: copy f, e;
  dma: store F[0, 0], f;
}
K
# npy DESCR FILE VALUES...: a (2, 4) .npy of DESCR ('<u2' and '<f2' patterns, '<f4', '<i4', '|u1').
npy() {
  python3 - "$@" <<'PY'
import struct, sys
descr, path, values = sys.argv[1], sys.argv[2], sys.argv[3:]
fmt = {"<u2": "<H", "<f2": "<H", "<f4": "<f", "<i4": "<i", "|u1": "<B"}[descr]
data = b"".join(struct.pack(fmt, int(v, 0) if fmt in ("<H", "<i", "<B") else float(v)) for v in values)
header = "{'descr': '%s', 'fortran_order': False, 'shape': (2, 4), }" % descr
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
PY
}
# npy_values FILE: the file's dtype and its elements (patterns in hex, floats as repr).
npy_values() {
  python3 - "$1" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<H", raw[8:10])[0]
header, data = raw[10:10 + n].decode(), raw[10 + n:]
descr = header.split("'descr': '")[1].split("'")[0]
fmt, size = {"<u2": ("<H", 2), "<f2": ("<H", 2), "|u1": ("<B", 1), "<f4": ("<f", 4)}[descr]
vals = [struct.unpack(fmt, data[i:i + size])[0] for i in range(0, len(data), size)]
print(descr, " ".join(hex(v) if fmt != "<f" else repr(v) for v in vals))
PY
}
# 1, -2, 448, 464 (a tie: 448 in fp8e4), 0.1 (0x3DCD), 2^-9, -0, 3
npy "<u2" "$tmp/x.npy" 0x3F80 0xC000 0x43E0 0x43E8 0x3DCD 0x3B00 0x8000 0x4040
if expect 0 "" run "$tmp/types.bfk" N=1 --input X="$tmp/x.npy" --output Y="$tmp/y.npy" --output Z="$tmp/z.npy" \
  --output F="$tmp/f.npy"; then
  [[ $(npy_values "$tmp/y.npy") == "<u2 0x3f80 0xc000 0x43e0 0x43e8 0x3dcd 0x3b00 0x8000 0x4040" ]] ||
    fail "bf16 patterns do not round-trip: $(npy_values "$tmp/y.npy")"
  [[ $(npy_values "$tmp/z.npy") == "|u1 0x38 0xc0 0x7e 0x7e 0x1d 0x1 0x80 0x44" ]] ||
    fail "fp8e4 patterns are not the rounded values: $(npy_values "$tmp/z.npy")"
  [[ $(npy_values "$tmp/f.npy") == "<f4 1.0 -2.0 448.0 448.0 0.1015625 0.001953125 -0.0 3.0" ]] ||
    fail "fp8e4 values read back as f32 are wrong: $(npy_values "$tmp/f.npy")"
fi
# float32 for a bf16 tensor: rounded to nearest even (two ties, one past half way)
npy "<f4" "$tmp/xf.npy" 1.00390625 1.01171875 3.3 -0.0 0.1 1 2 -448
if expect 0 "" run "$tmp/types.bfk" N=1 --input X="$tmp/xf.npy" --output Y="$tmp/y.npy"; then
  [[ $(npy_values "$tmp/y.npy") == "<u2 0x3f80 0x3f82 0x4053 0x8000 0x3dcd 0x3f80 0x4000 0xc3e0" ]] ||
    fail "float32 input is not rounded to bf16 to nearest even: $(npy_values "$tmp/y.npy")"
fi
npy "<i4" "$tmp/xi.npy" 1 2 3 4 5 6 7 8
expect 1 "dtype is '<i4', but tensor X is bf16: give its bit patterns as uint16 ('<u2') or float32" \
  run "$tmp/types.bfk" N=1 --input X="$tmp/xi.npy"
npy "|u1" "$tmp/xb.npy" 1 2 3 4 5 6 7 8
expect 1 "dtype is '|u1', but tensor X is bf16" run "$tmp/types.bfk" N=1 --input X="$tmp/xb.npy"
# 466 fits bf16 but not fp8e4: the f64 reference stops the run at the copy
npy "<u2" "$tmp/xo.npy" 0x43E9 0 0 0 0 0 0 0
expect 1 "line 11: 'copy' produces 466, which overflows fp8e4 to NaN, from finite inputs" \
  run "$tmp/types.bfk" N=1 --input X="$tmp/xo.npy"

# NaN and Inf inputs: what the kernel makes of them equals the f64
# reference's NaN and Inf exactly (run once failed, "off the f64 reference
# at [0, 0]: nan, exactly nan, by nan"); only NaN or Inf made from finite
# inputs stops a run.
cat >"$tmp/nonfinite.bfk" <<'K'
kernel nonfinite(N: int) {
  hbm in X: f32[2, 4];
  hbm out Y: f32[2, 4];
  sbuf x: f32[2, 4];
  sbuf m: f32[2, 1];
  dma: load x, X[0, 0];
  dve: rowmax m, x;
  act: sub_row x, x, m;
  act: exp x, x;
  dve: scale x, x, 2.0;
  dma: store Y[0, 0], x;
}
K
npy "<f4" "$tmp/nonfinite.npy" nan 1 2 3 inf 1 -inf 0
if expect 0 "" run "$tmp/nonfinite.bfk" N=1 --input X="$tmp/nonfinite.npy" --sync=both --output Y="$tmp/nonfinite_y.npy"; then
  [[ $(npy_values "$tmp/nonfinite_y.npy") == "<f4 nan nan nan nan nan 0.0 0.0 0.0" ]] ||
    fail "NaN and Inf inputs: $(npy_values "$tmp/nonfinite_y.npy")"
fi

# fp16 ('<f2') and fp8e5 (OCP E5M2, '|u1'), the same way.
sed 's/kernel types(/kernel types16(/; s/bf16/fp16/g; s/fp8e4/fp8e5/g' "$tmp/types.bfk" >"$tmp/types16.bfk"
# 1, -2, 57344 (fp8e5's largest), 0.1 (0x2E66), 2^-16 (an fp16 subnormal, fp8e5's smallest), -0, 3,
# 1.125 (a tie in fp8e5: to the even 1)
npy "<f2" "$tmp/x16.npy" 0x3C00 0xC000 0x7B00 0x2E66 0x0100 0x8000 0x4200 0x3C80
if expect 0 "" run "$tmp/types16.bfk" N=1 --input X="$tmp/x16.npy" --output Y="$tmp/y16.npy" \
  --output Z="$tmp/z16.npy" --output F="$tmp/f16.npy"; then
  [[ $(npy_values "$tmp/y16.npy") == "<f2 0x3c00 0xc000 0x7b00 0x2e66 0x100 0x8000 0x4200 0x3c80" ]] ||
    fail "fp16 patterns do not round-trip: $(npy_values "$tmp/y16.npy")"
  [[ $(npy_values "$tmp/z16.npy") == "|u1 0x3c 0xc0 0x7b 0x2e 0x1 0x80 0x42 0x3c" ]] ||
    fail "fp8e5 patterns are not the rounded values: $(npy_values "$tmp/z16.npy")"
  [[ $(npy_values "$tmp/f16.npy") == "<f4 1.0 -2.0 57344.0 0.09375 1.52587890625e-05 -0.0 3.0 1.0" ]] ||
    fail "fp8e5 values read back as f32 are wrong: $(npy_values "$tmp/f16.npy")"
fi
# float32 for an fp16 tensor: rounded to nearest even (a tie to 1, just below the tie 57360 to 57344)
npy "<f4" "$tmp/xf16.npy" 1.00048828125 57359.99 0.1 -0.0 1e-8 3e-8 2 -448
if expect 0 "" run "$tmp/types16.bfk" N=1 --input X="$tmp/xf16.npy" --output Y="$tmp/y16.npy"; then
  [[ $(npy_values "$tmp/y16.npy") == "<f2 0x3c00 0x7b00 0x2e66 0x8000 0x0 0x1 0x4000 0xdf00" ]] ||
    fail "float32 input is not rounded to fp16 to nearest even: $(npy_values "$tmp/y16.npy")"
fi
expect 1 "dtype is '<u2', but tensor X is fp16: give float16 ('<f2') or float32" \
  run "$tmp/types16.bfk" N=1 --input X="$tmp/x.npy"
expect 1 "dtype is '<f2', but tensor X is bf16" run "$tmp/types.bfk" N=1 --input X="$tmp/x16.npy"
# 61440 fits fp16 but is fp8e5's overflow (the tie goes to Inf): the f64 reference stops the run
npy "<f2" "$tmp/xo16.npy" 0x7B80 0 0 0 0 0 0 0
expect 1 "line 11: 'copy' produces 61440, which overflows fp8e5 to Inf, from finite inputs" \
  run "$tmp/types16.bfk" N=1 --input X="$tmp/xo16.npy"

# ---- SIGTERM removes a command's temporary files: NAME's, in DIR (its
# TMPDIR), once one matching GLOB exists; the command runs in the background.
term_after() {
  local name=$1 dir=$2 glob=$3 pid=$!
  for _ in $(seq 1 200); do
    compgen -G "$dir/$glob" >/dev/null && break
    sleep 0.05
  done
  compgen -G "$dir/$glob" >/dev/null || fail "$name made no $glob in TMPDIR"
  kill -TERM "$pid"
  wait "$pid"
  local status=$?
  [[ $status == 143 ]] || fail "$name after SIGTERM exited $status, not 143 (killed by SIGTERM)"
}

# The campaign's gcc step scratch directory.
mkdir -p "$tmp/t"
TMPDIR="$tmp/t" "$BFSYNC" campaign --from 1 --count 100000 --gcc-every 1 --jobs 1 >/dev/null 2>&1 &
term_after campaign "$tmp/t" "bfsync-campaign-*/k*"
compgen -G "$tmp/t/bfsync-campaign-*" >/dev/null && fail "campaign left $(ls "$tmp/t") after SIGTERM"

# run's trace parts and an output's temporary, which it once left behind.
mkdir -p "$tmp/r"
TMPDIR="$tmp/r" "$BFSYNC" run examples/pingpong.bfk N=2000000 --trace "$tmp/r/t.json" >/dev/null 2>&1 &
term_after run "$tmp/r" "bfsync-trace-*"
[[ -z $(ls "$tmp/r") ]] && [[ ! -e $tmp/r/t.json ]] || fail "run left $(ls "$tmp/r") after SIGTERM"

finish

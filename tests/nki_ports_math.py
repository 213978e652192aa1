"""nki_ports_math.py: the ports of examples/nki compute what their sources
compute. Each port runs once (bfsync run, default inputs from --seed 1),
its input and output tensors are read back (--output), and the output is
compared with the source's function computed here in Python doubles, from
the source's own formulas, independently of bfsync's references: in full
for rmsnorm, layernorm, cumsum and rotary (ragged sizes), at sampled
elements for matmul and attention (Python is too slow for all of them).
Tolerances: f32 arithmetic against doubles (1e-4 relative to the row's
scale), and 2e-2 for attention, whose exp_row and transposed scores are
bf16 as in the source. Called by tests/nki_ports.sh; exit 1 on a mismatch.
The blockwise MoE port is not checked here (its reference in Python
would take minutes); its exactness against both references is in
nki_ports.sh."""
import math, os, random, struct, subprocess, sys, tempfile

BFSYNC = os.environ["BFSYNC"]
failures = 0


def run(kernel, params, tensors):
    d = tempfile.mkdtemp()
    args = [BFSYNC, "run", "examples/nki/%s.bfk" % kernel]
    for p in params.split():
        args += ["-p", p]
    for t in tensors:
        args += ["--output", "%s=%s/%s.npy" % (t, d, t)]
    subprocess.run(args, check=True, capture_output=True)
    out = {}
    for t in tensors:
        b = open("%s/%s.npy" % (d, t), "rb").read()
        n = struct.unpack("<H", b[8:10])[0]
        header = b[10:10 + n].decode()
        shape = tuple(int(x) for x in header.split("(")[1].split(")")[0].split(",") if x.strip())
        data = struct.unpack("<%df" % (len(b[10 + n:]) // 4), b[10 + n:])
        # an N-D tensor (rotary's) row major as [rows, cols]: rows the product of all but the last
        rows, cols = (math.prod(shape[:-1]), shape[-1]) if len(shape) >= 2 else (shape[0], 1)
        out[t] = [list(data[r * cols:(r + 1) * cols]) for r in range(rows)]
    return out


def check(name, got, want, tol):
    global failures
    worst = 0.0
    for g, w, scale in zip(got, want, [max(1.0, max(abs(x) for x in row)) for row in want]):
        for a, b in zip(g, w):
            worst = max(worst, abs(a - b) / scale)
    ok = worst <= tol and len(got) == len(want)
    print("nki_ports_math: %s: max error %.3g (tolerance %g)%s" % (name, worst, tol, "" if ok else "  FAIL"))
    failures += not ok


# rmsnorm: a / sqrt(mean(a^2)) * g
t = run("rmsnorm", "N=300", "AGO")
a, g = t["A"], t["G"][0]
want = [[x / math.sqrt(sum(y * y for y in r) / len(r)) * gg for x, gg in zip(r, g)] for r in a]
check("rmsnorm N=300", t["O"], want, 1e-4)

# layernorm: (x - mean) / sqrt(var + eps) * gamma + beta
t = run("layernorm", "N=40", ["X", "GAMMA", "BETA", "O"])
want = []
for r in t["X"]:
    m = sum(r) / len(r)
    v = sum((x - m) ** 2 for x in r) / len(r)
    want.append([(x - m) / math.sqrt(v + 1e-5) * gm + bt for x, gm, bt in zip(r, t["GAMMA"][0], t["BETA"][0])])
check("layernorm N=40", t["O"], want, 1e-4)

# cumsum along the last dimension
t = run("cumsum", "B=130 H=2100", "XY")
want = []
for r in t["X"]:
    s, row = 0.0, []
    for x in r:
        s += x
        row.append(s)
    want.append(row)
check("cumsum B=130 H=2100", t["Y"], want, 1e-4)

# rotary: out[0] = q cos + rotate_half(q) sin, out[1] likewise for k
B, NH, S, D = 1, 2, 130, 128
t = run("rotary", "B=%d NH=%d S=%d" % (B, NH, S), ["Q", "K", "COS", "SIN", "OUT"])
want = []
for x in ("Q", "K"):
    for b in range(B):
        for h in range(NH):
            for s in range(S):
                r, c, sn = t[x][(b * NH + h) * S + s], t["COS"][b * S + s], t["SIN"][b * S + s]
                rot = [-v for v in r[D // 2:]] + r[:D // 2]
                want.append([r[i] * c[i] + rot[i] * sn[i] for i in range(D)])
check("rotary B=1 NH=2 S=130", t["OUT"], want, 1e-4)

# matmul: result = lhsT^T rhs, at 64 sampled elements
t = run("matmul", "NBN=1 NBK=1", ["LHST", "RHS", "RESULT"])
rnd = random.Random(1)
got, want = [], []
for _ in range(64):
    i, j = rnd.randrange(len(t["RESULT"])), rnd.randrange(len(t["RESULT"][0]))
    got.append([t["RESULT"][i][j]])
    want.append([sum(t["LHST"][k][i] * t["RHS"][k][j] for k in range(len(t["LHST"])))])
check("matmul NBN=1 NBK=1 (64 elements)", got, want, 1e-4)

# attention: softmax(q^T k) v, causal, at 12 sampled query rows
S = 512
t = run("attention", "S=%d CAUSAL=1" % S, ["Q", "K", "V", "OUT"])
q, k, v = t["Q"], t["K"], t["V"]
got, want = [], []
for i in sorted(rnd.sample(range(S), 12)):
    sc = [sum(q[c][i] * k[c][j] for c in range(128)) for j in range(i + 1)]
    m = max(sc)
    w = [math.exp(x - m) for x in sc]
    got.append(t["OUT"][i])
    want.append([sum(w[j] * v[c][j] for j in range(i + 1)) / sum(w) for c in range(128)])
check("attention S=512 CAUSAL=1 (12 rows)", got, want, 2e-2)

sys.exit(1 if failures else 0)

#!/usr/bin/env bash
# timeline.sh: `bfsync timeline`, a trace drawn as an SVG (issue 13).
#
# 1. A kernel run with --sync=both --exec=sim --trace, drawn with --cycles:
#    the SVG is well-formed XML; each of the two runs (one process each) has
#    one row per engine of the trace, named as its thread_name events, in
#    the overview and in the zoom; the zoom (the whole run here: no lane has
#    more than 40 ops) has one rectangle per X event, its tooltip naming the
#    event, its operands' element types (every op event has args.dtypes)
#    and its line; the overview colours every engine that ran an op.
#    The same trace drawn in microseconds says so on its axis.
# 2. Malformed and hostile traces (truncated, wrong types, numbers too large
#    or out of range, NUL bytes, invalid UTF-8, nesting 10,000 deep,
#    duplicate keys, trailing text, empty) exit 1 with one positioned
#    message (FILE:LINE:COL: error:) and leave the output as it was; 200
#    randomly damaged copies of the real trace give exit 0 and a valid SVG
#    or exit 1 and one message, never a signal.
# 3. Usage errors exit 2; an unreadable trace exits 1.
# No golden files: UPDATE=1 changes nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC

python3 - <<'EOF_PY'
import json, os, re, subprocess, tempfile
import xml.etree.ElementTree as ET

bfsync = os.environ["BFSYNC"]
failures = []
tmp = tempfile.mkdtemp()
SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    failures.append(msg)


def run(args):
    return subprocess.run([bfsync] + args, capture_output=True, text=True)


# ---- 1. A real trace, both modes.
trace = os.path.join(tmp, "t.json")
r = run(["run", "examples/softmax.bfk", "-p", "R=2", "--sync=both", "--exec=sim", "--trace", trace])
if r.returncode:
    fail("run --trace: " + r.stderr)
doc = json.load(open(trace))
events = doc["traceEvents"]
engines = {}  # pid -> [names by tid]
labels = {}
for e in events:
    if e["ph"] == "M" and e["name"] == "thread_name":
        engines.setdefault(e["pid"], {})[e["tid"]] = e["args"]["name"]
    if e["ph"] == "M" and e["name"] == "process_name":
        labels[e["pid"]] = e["args"]["name"]
spans = [e for e in events if e["ph"] == "X"]
assert sorted(labels) == [1, 2], labels

svg = os.path.join(tmp, "t.svg")
r = run(["timeline", trace, "--cycles", "-o", svg, "--title", "softmax & <both>"])
if r.returncode:
    fail("timeline: exit %d %s" % (r.returncode, r.stderr))
root = ET.parse(svg).getroot()  # well-formed, or this raises
texts = [t.text for t in root.iter(SVG + "text")]
if "softmax & <both>" not in texts:
    fail("title not drawn (escaped): %s" % texts[:2])
for pid in (1, 2):
    heads = [t for t in texts if t.startswith(labels[pid] + ": events end at ") and t.endswith(" cycles")]
    if len(heads) != 2:
        fail("run %s: %d headings, expected 2 (overview, zoom)" % (labels[pid], len(heads)))
# Rows: the lane backgrounds, in order; each view lists pid 1's engines then pid 2's.
lanes = [t.text for t in root.iter(SVG + "text") if t.get("text-anchor") == "end" and t.text not in ("cycles",)]
expect = []
for view in range(2):
    for pid in (1, 2):
        expect += [engines[pid][tid] for tid in sorted(engines[pid])]
if lanes != expect:
    fail("lane rows %s, expected %s" % (lanes, expect))
backgrounds = [x for x in root.iter(SVG + "rect") if x.get("fill") == "#eeeeee" and x.get("width") == "1292"]
if len(backgrounds) != len(expect):
    fail("%d lane backgrounds, expected %d" % (len(backgrounds), len(expect)))
ops = [x for x in root.iter(SVG + "rect") if x.find(SVG + "title") is not None]
if len(ops) != len(spans):
    fail("%d event rectangles in the zoom, expected one per X event (%d)" % (len(ops), len(spans)))
tips = sorted(x.find(SVG + "title").text.split(" ")[0] for x in ops)
if tips != sorted(e["name"] for e in spans):
    fail("tooltips name other events than the trace's")
if not all(re.match(r"^\w+ (\w+ <- \w+(, \w+)? |\w+ )?\(line \d+\) ", x.find(SVG + "title").text) for x in ops):
    fail("a tooltip without its line")


def typing(e):  # an op's operand types as the tooltip shows them: "DST <- SRC, SRC"
    types = e["args"].get("dtypes", [])
    return (" " + types[0] + (" <- " + ", ".join(types[1:]) if types[1:] else "")) if types else ""


want = sorted("%s%s (line %d)" % (e["name"], typing(e), e["args"]["line"]) for e in spans)
if sorted(x.find(SVG + "title").text.split(") ")[0] + ")" for x in ops) != want:
    fail("tooltips do not show each event's operand types and line")
if not all(e["args"].get("dtypes") for e in spans if e["cat"] == "op"):
    fail("an op event without its operand types (args.dtypes)")
plain = [x for x in root.iter(SVG + "rect") if x.find(SVG + "title") is None and x.get("height") == "15"
         and x.get("fill") not in ("#eeeeee",)]
if not plain:
    fail("the overview colours nothing")

# A bf16 kernel's ops carry its storage types: mul_row y, x, rms stores bf16 from bf16 and f32.
bf_trace = os.path.join(tmp, "bf.json")
r = run(["run", "examples/rmsnorm_bf16.bfk", "R=1", "--trace", bf_trace])
if r.returncode:
    fail("run rmsnorm_bf16 --trace: " + r.stderr)
elif {tuple(e["args"]["dtypes"]) for e in json.load(open(bf_trace))["traceEvents"]
      if e.get("name") == "mul_row"} != {("bf16", "bf16", "f32")}:
    fail("rmsnorm_bf16's mul_row events do not have dtypes bf16, bf16, f32")

svg_us = os.path.join(tmp, "us.svg")
r = run(["timeline", trace, "-o", svg_us])
if r.returncode or not [t for t in ET.parse(svg_us).getroot().iter(SVG + "text") if t.text == "us"]:
    fail("timeline in microseconds: %d %s" % (r.returncode, r.stderr))

# Hand-written: names in UTF-8 and as escapes (a surrogate pair, characters
# XML cannot hold), a bare array of events, unknown fields and ph kinds,
# spans that overlap and cover the whole run: a well-formed SVG.
odd = os.path.join(tmp, "odd.json")
text = json.dumps([
    {"name": "process_name", "ph": "M", "pid": 7, "tid": 0, "args": {"name": "caf\u00e9 @PAIR@"}},
    {"name": "thread_name", "ph": "M", "pid": 7, "tid": 3, "args": {"name": "e\u0001\ufffe<&>"}},
    {"name": "exp", "ph": "X", "pid": 7, "tid": 3, "ts": 0, "dur": 1e6, "args": {"line": 2, "x": [1, {"y": None}]}},
    {"name": "mystery", "ph": "X", "pid": 7, "tid": 3, "ts": 0.5, "dur": 2.25, "extra": True},
    {"name": "wait", "ph": "X", "pid": 7, "tid": 5, "ts": 10, "dur": 0},
    {"name": "counter", "ph": "C", "pid": 7, "tid": 3, "ts": 1, "args": {"v": 1}},
], ensure_ascii=False)
open(odd, "wb").write(text.replace("@PAIR@", "\\ud83d\\ude00").encode("utf-8"))
odd_svg = os.path.join(tmp, "odd.svg")
r = run(["timeline", odd, "-o", odd_svg])
if r.returncode:
    fail("odd trace: exit %d %s" % (r.returncode, r.stderr))
else:
    oroot = ET.parse(odd_svg).getroot()
    otexts = [t.text for t in oroot.iter(SVG + "text")]
    if not any(t.startswith("caf\u00e9 \U0001f600: events end at 1,000,000 us") for t in otexts):
        fail("odd trace heading: %s" % otexts[:4])
    if otexts.count("e??<&>") != 2 or otexts.count("engine 5") != 2:
        fail("odd trace lanes: %s" % otexts)
    if len([x for x in oroot.iter(SVG + "rect") if x.find(SVG + "title") is not None]) != 3:
        fail("odd trace: not one rectangle per X event")

# ---- 2. Malformed traces: exit 1, one positioned message, the output untouched.
good = open(trace, "rb").read()
first_x = good.index(b'"ph":"X"')
cases = {
    "truncated": good[: len(good) // 2],
    "empty": b"",
    "not json": b"hello",
    "ts a string": re.sub(rb'"ts":([0-9.]+)', rb'"ts":"\1"', good, count=1),
    "pid a string": b'{"traceEvents":[{"name":"load","ph":"X","pid":"1","tid":0,"ts":0}]}',
    "args not an object": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":[1]}]}',
    "traceEvents an object": b'{"traceEvents":{}}',
    "no traceEvents": b'{"displayTimeUnit":"ns"}',
    "huge number": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":1e400}]}',
    "ts out of range": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":1e300}]}',
    "negative dur": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"dur":-1}]}',
    "tid too large": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":99,"ts":0}]}',
    "fractional pid": b'{"traceEvents":[{"name":"load","ph":"X","pid":1.5,"tid":0,"ts":0}]}',
    "long number": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":' + b"1" * 100 + b"}]}",
    "NUL byte": good[:first_x] + b"\0" + good[first_x:],
    "NUL in a string": b'{"traceEvents":[{"name":"lo\0ad","ph":"X","pid":1,"tid":0,"ts":0}]}',
    "escaped NUL": b'{"traceEvents":[{"name":"lo\\u0000ad","ph":"X","pid":1,"tid":0,"ts":0}]}',
    "invalid UTF-8": b'{"traceEvents":[{"name":"lo\xffad","ph":"X","pid":1,"tid":0,"ts":0}]}',
    "lone surrogate": b'{"traceEvents":[{"name":"\\ud800","ph":"X","pid":1,"tid":0,"ts":0}]}',
    "deep nesting": b'{"traceEvents":[' + b"[" * 10000 + b"]" * 10000 + b"]}",
    "duplicate ts": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"ts":1}]}',
    "trailing comma": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0},]}',
    "trailing text": good + b"x",
    "X without ts": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0}]}',
    "long name": b'{"traceEvents":[{"name":"' + b"a" * 1000 + b'","ph":"X","pid":1,"tid":0,"ts":0}]}',
    "no events": b'{"traceEvents":[]}',
    "dtypes not an array": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":{"dtypes":"f32"}}]}',
    "dtypes of numbers": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":{"dtypes":[4]}}]}',
    "eight dtypes": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":{"dtypes":["a","b","c","d","e","f","g","h"]}}]}',  # an op has at most 7 operands
    "long dtype": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":{"dtypes":["' + b"f" * 40 + b'"]}}]}',
    "duplicate dtypes": b'{"traceEvents":[{"name":"load","ph":"X","pid":1,"tid":0,"ts":0,"args":{"dtypes":[],"dtypes":[]}}]}',
}
out = os.path.join(tmp, "keep.svg")
for what, text in cases.items():
    path = os.path.join(tmp, "bad.json")
    open(path, "wb").write(text)
    open(out, "w").write("previous")
    r = subprocess.run([bfsync, "timeline", path, "-o", out], capture_output=True)
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode != 1 or not re.match(r"^%s:\d+:\d+: error: \S" % re.escape(path), err) or err.count("\n") != 1:
        fail("%s: exit %d, stderr %r" % (what, r.returncode, err[:300]))
    if open(out).read() != "previous":
        fail("%s: the output was changed" % what)

# Random damage (seeded): 200 copies of the real trace with bytes changed,
# inserted or cut, each drawn: exit 0 with an SVG that parses, or exit 1
# with one positioned message; never a signal (make test-asan runs this
# under ASan and UBSan).
import random
rng = random.Random(13)
path = os.path.join(tmp, "damaged.json")
drawn = 0
for i in range(200):
    text = bytearray(good)
    for _ in range(rng.randint(1, 4)):
        if not text:  # cut to nothing already
            break
        at = rng.randrange(len(text))
        what = rng.randrange(4)
        if what == 0:
            text[at] = rng.randrange(256)
        elif what == 1:
            text[at:at] = bytes([rng.choice(b'{}[]",:0-e.\\u\x00\xff')])
        elif what == 2:
            del text[at:at + rng.randint(1, 40)]
        else:
            text = text[:at]
    open(path, "wb").write(bytes(text))
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([bfsync, "timeline", path, "-o", out], capture_output=True)
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode == 0:
        drawn += 1
        try:
            ET.parse(out)
        except ET.ParseError as e:
            fail("damaged trace %d: an SVG that does not parse: %s" % (i, e))
    elif r.returncode != 1 or not re.match(r"^%s:\d+:\d+: error: \S" % re.escape(path), err) or err.count("\n") != 1:
        fail("damaged trace %d: exit %d, stderr %r" % (i, r.returncode, err[:300]))
        open(os.path.join(tmp, "failed-%d.json" % i), "wb").write(bytes(text))

# ---- 3. Usage and unreadable files.
for args, status in ((["timeline", trace], 2), (["timeline", "-o", svg], 2), (["timeline", trace, "-o", trace], 2),
                     (["timeline", trace, "-o", svg, "--target", "targets/trn1.target"], 2),
                     (["timeline", os.path.join(tmp, "missing.json"), "-o", svg], 1)):
    r = run(args)
    if r.returncode != status or "error" not in r.stderr:
        fail("%s: exit %d (expected %d) %s" % (" ".join(args), r.returncode, status, r.stderr))

for f in failures:
    print("FAIL:", f)
if failures:
    raise SystemExit(1)
print("timeline.sh: ok (%d lanes, %d events drawn; %d malformed traces refused; of 200 damaged ones, %d drawn, "
      "the others refused)" % (len(expect), len(spans), len(cases), drawn))
EOF_PY

#!/usr/bin/env python3
"""timeline.py: draw a kernel's barrier and barrier-free runs as one SVG.

This is the picture a user looks at first, so it answers one question at a
glance: where does the barrier baseline lose time that barrier-free does
not?  The input is two or more Chrome traces written by `bfsync run
--trace` (one track per engine, an X event per op, `wait` and `barrier`
X events for the stalls); the output is one standalone SVG with

  - an overview of each run, one above the other on a common time axis,
    one lane per engine; an engine's lane is coloured, pixel column by
    pixel column, by what took most of that column's time: an op class
    (dma, matmul, elementwise, transcendental, reduce), a wait, a barrier,
    or nothing (idle);
  - a zoom on the first cycles of both runs (the same window for both, so
    the barrier-free run visibly gets further), where every event is its
    own rectangle with a tooltip;
  - a time axis (in the trace's unit: cycles for the simulator) and a
    legend.

Op classes come from runtime/ops.def, the table the cost model uses, so
the colours follow the simulator's own classification. Only the standard
library is used: the benchmark must run on a fresh machine.

Trace times are microseconds (Chrome's unit); the simulator converts its
cycles at the target's clock, and rounds. Given a run's makespan in cycles
(`bfsync run --json` reports it), the run's times are rescaled so that
the drawing is in exact cycles and ends where the JSON says.

usage: timeline.py --ops runtime/ops.def --title TEXT [--unit cycles]
                   -o OUT.svg --run LABEL TRACE.json MAKESPAN ...
"""
import argparse
import json
import re
from xml.sax.saxutils import escape

CLASS_COLOURS = (
    ("DMA", "dma", "#4e79a7"),
    ("MATMUL", "matmul", "#b07aa1"),
    ("ELEMWISE", "elementwise", "#59a14f"),
    ("TRANSCENDENTAL", "transcendental", "#edc948"),
    ("REDUCE", "reduce", "#9c755f"),
)
STALL_COLOURS = (("wait", "wait (stall)", "#e15759"), ("barrier", "barrier (stall)", "#7b1f1f"))
IDLE_COLOUR = "#eeeeee"

WIDTH = 1400
LEFT = 84
RIGHT = 24
LANE_H = 15
LANE_GAP = 3
PANEL_GAP = 26
ZOOM_OPS = 40  # ops in the busiest lane of the slowest run that the zoom window shows


def op_classes(ops_def_path):
    """name -> class name (DMA, MATMUL, ...), from the OP(...) rows of ops.def:
    the cost class is the last-but-one column (the last is the accuracy class)."""
    row = re.compile(r'^OP\(\s*\w+\s*,\s*"(\w+)"\s*,.*,\s*(\w+)\s*,\s*\w+\s*\)\s*$')
    classes = {}
    with open(ops_def_path) as f:
        for line in f:
            m = row.match(line.strip())
            if m:
                classes[m.group(1)] = m.group(2)
    return classes


def load_trace(path, classes, makespan):
    """(engine names in tid order, events as (tid, start, end, category, name, line)),
    times scaled so that the last event ends at makespan (0: unscaled)."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {}
    spans = []
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            category = e["name"] if e["name"] in ("wait", "barrier") else classes.get(e["name"], "ELEMWISE")
            start = float(e["ts"])
            line = e.get("args", {}).get("line", "")
            spans.append((e["tid"], start, start + float(e.get("dur", 0)), category, e["name"], line))
    engines = [names.get(t, "engine %d" % t) for t in sorted(names)]
    end = max((s[2] for s in spans), default=0.0)
    if makespan > 0 and end > 0:
        k = makespan / end
        spans = [(t, a * k, b * k, c, n, l) for t, a, b, c, n, l in spans]
    return engines, spans


def colour_of(category):
    for key, _, colour in CLASS_COLOURS + STALL_COLOURS:
        if key == category:
            return colour
    return IDLE_COLOUR


def nice_step(span, ticks=8):
    """A 1, 2 or 5 times a power of ten step giving about `ticks` ticks."""
    raw = max(span / ticks, 1e-9)
    power = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1.0
    while power > raw:
        power /= 10
    for mult in (1, 2, 5, 10):
        if power * mult >= raw:
            return power * mult
    return power * 10


def fmt_time(t):
    if t >= 1e6:
        return "%gM" % round(t / 1e6, 3)
    if t >= 1e4:
        return "%gk" % round(t / 1e3, 3)
    return "%g" % round(t, 3)


def axis(out, y, t0, t1, unit):
    """A time axis under a view covering [t0, t1]."""
    plot = WIDTH - LEFT - RIGHT
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (LEFT, y, WIDTH - RIGHT, y))
    step = nice_step(t1 - t0)
    t = (int(t0 / step) + (1 if t0 % step else 0)) * step
    while t <= t1 + 1e-9:
        x = LEFT + (t - t0) / (t1 - t0) * plot
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>' % (x, y, x, y + 4))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, y + 15, fmt_time(t)))
        t += step
    out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (WIDTH - RIGHT, y + 28, escape(unit)))
    return y + 34


def binned_lane(spans, t1, columns):
    """Per pixel column, the category that took most of its time (None: idle)."""
    per_col = t1 / columns
    acc = [dict() for _ in range(columns)]
    for _, start, end, category, _, _ in spans:
        first = int(start / per_col)
        last = min(int(end / per_col), columns - 1)
        for c in range(max(first, 0), last + 1):
            lo = max(start, c * per_col)
            hi = min(end, (c + 1) * per_col)
            if hi > lo:
                acc[c][category] = acc[c].get(category, 0.0) + (hi - lo)
    result = []
    for a in acc:
        best = max(a, key=a.get) if a else None
        idle = per_col - sum(a.values())
        result.append(best if best is not None and a[best] >= idle else None)
    return result


def draw_overview_lane(out, spans, t1, y):
    plot = WIDTH - LEFT - RIGHT
    cols = binned_lane(spans, t1, plot)
    c = 0
    while c < plot:
        cat = cols[c]
        end = c
        while end + 1 < plot and cols[end + 1] == cat:
            end += 1
        if cat is not None:
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>'
                       % (LEFT + c, y, end - c + 1, LANE_H, colour_of(cat)))
        c = end + 1


def draw_zoom_lane(out, spans, t1, y):
    plot = WIDTH - LEFT - RIGHT
    for _, start, end, category, name, line in spans:
        if start >= t1:
            continue
        x0 = LEFT + start / t1 * plot
        x1 = LEFT + min(end, t1) / t1 * plot
        tip = "%s (line %s) %s..%s" % (name, line, fmt_time(start), fmt_time(end))
        out.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="#fff" stroke-width="0.3">'
                   '<title>%s</title></rect>' % (x0, y, max(x1 - x0, 0.6), LANE_H, colour_of(category), escape(tip)))


def view(out, y, runs, t1, zoom, unit):
    """One panel per run, lanes per engine, over [0, t1]; returns the next y."""
    plot = WIDTH - LEFT - RIGHT
    for label, engines, spans, makespan in runs:
        shown = "%s: %s %s" % (label, format(int(round(makespan)), ","), unit)
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (LEFT, y + 12, escape(shown)))
        y += 18
        for tid, engine in enumerate(engines):
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>' % (LEFT, y, plot, LANE_H, IDLE_COLOUR))
            out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (LEFT - 6, y + LANE_H - 3, escape(engine)))
            lane = [s for s in spans if s[0] == tid]
            (draw_zoom_lane if zoom else draw_overview_lane)(out, lane, t1, y)
            y += LANE_H + LANE_GAP
        if not zoom and makespan <= t1:
            x = LEFT + makespan / t1 * plot
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="1.5"/>'
                       % (x, y - len(engines) * (LANE_H + LANE_GAP) - 4, x, y))
        y += 6
    return axis(out, y, 0.0, t1, unit) + PANEL_GAP


def zoom_window(runs):
    """End of the ZOOM_OPS-th op in the busiest lane of the slowest run."""
    _, engines, spans, makespan = max(runs, key=lambda r: r[3])
    best = makespan
    busiest = max(range(len(engines)), key=lambda t: sum(1 for s in spans if s[0] == t and s[3] not in ("wait", "barrier")))
    ends = sorted(s[2] for s in spans if s[0] == busiest and s[3] not in ("wait", "barrier"))
    if len(ends) > ZOOM_OPS:
        best = ends[ZOOM_OPS - 1]
    return max(best, 1.0)


def legend(out, y):
    x = LEFT
    for _, label, colour in CLASS_COLOURS + STALL_COLOURS + (("idle", "idle", IDLE_COLOUR),):
        out.append('<rect x="%d" y="%d" width="14" height="12" fill="%s" stroke="#999" stroke-width="0.5"/>' % (x, y, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (x + 19, y + 10, escape(label)))
        x += 34 + 7 * len(label)
    return y + 24


def render(title, runs, unit):
    t_all = max(max(r[3] for r in runs), 1.0)
    t_zoom = min(zoom_window(runs), t_all)
    body = []
    y = 28
    body.append('<text x="%d" y="%d" font-size="16" font-weight="bold">%s</text>' % (LEFT, y, escape(title)))
    y += 12
    y = legend(body, y + 8)
    body.append('<text x="%d" y="%d" font-style="italic">Whole run (each pixel column shows what took most of its time;'
                ' black line: end of the run)</text>' % (LEFT, y + 10))
    y = view(body, y + 16, runs, t_all, False, unit)
    body.append('<text x="%d" y="%d" font-style="italic">Zoom: the first %s %s of both runs (every event drawn)</text>'
                % (LEFT, y + 10, fmt_time(t_zoom), escape(unit)))
    y = view(body, y + 16, runs, t_zoom, True, unit)
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="DejaVu Sans, Arial, sans-serif" font-size="11">' % (WIDTH, y, WIDTH, y))
    return "\n".join([head, '<rect width="100%" height="100%" fill="#fff"/>'] + body + ["</svg>\n"])


def main():
    ap = argparse.ArgumentParser(description="Chrome traces of bfsync runs -> one SVG timeline")
    ap.add_argument("--ops", required=True, help="runtime/ops.def (op -> cost class)")
    ap.add_argument("--title", required=True)
    ap.add_argument("--unit", default="cycles")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--run", nargs=3, action="append", required=True, metavar=("LABEL", "TRACE", "MAKESPAN"),
                    help="a run, drawn top to bottom; MAKESPAN in the unit (0: the trace's own times)")
    args = ap.parse_args()
    classes = op_classes(args.ops)
    runs = []
    for label, path, makespan in args.run:
        engines, spans = load_trace(path, classes, float(makespan))
        runs.append((label, engines, spans, max((s[2] for s in spans), default=0.0)))
    with open(args.output, "w") as f:
        f.write(render(args.title, runs, args.unit))


if __name__ == "__main__":
    main()

/* trace.c: the execution trace, in Chrome's Trace Event Format, which
 * Perfetto and chrome://tracing open and which tools outside bfsync read
 * to check the synchronization independently (so the names are fixed; see
 * docs/runtime.md).
 *
 * Each engine appends to its own buffer while it runs (no sharing, no
 * locks), and the host writes the buffers out after the run, engine by
 * engine, so the events of one track are in the order the engine executed
 * them. One track per engine: pid 1, tid = engine index, named by a
 * thread_name metadata event. Ops are complete ("X") events named after
 * the op, with the element types of its tile and tensor operands, in
 * operand order (args.dtypes), waits are "wait" events naming the engine whose counter they
 * wait on and the threshold, barriers are "barrier" events. Times are
 * microseconds from the start of the run: wall-clock time, or the
 * executor's own clock when it has one (the simulator's cycles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "util/clock.h"
#include "util/json.h"

int64_t trace_now(Ctx *cx) {
  if (!cx->tracing) return 0;
  return cx->rt->exec->now_ns ? cx->rt->exec->now_ns(cx) : clock_now_ns() - cx->rt->start_ns;
}

void trace_record(Ctx *cx, int op, int line, int engine, int64_t threshold, int64_t start_ns) {
  if (!cx->tracing) return;
  TraceBuf *t = &cx->trace;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    TraceEvent *ev = realloc(t->ev, cap * sizeof *ev);
    if (!ev) rt_fail(cx, line, "out of memory recording the trace");
    t->ev = ev;
    t->cap = cap;
  }
  TraceEvent *ev = &t->ev[t->n++];
  *ev = (TraceEvent){op, line, {0}, engine, threshold, start_ns, trace_now(cx) - start_ns};
  memset(ev->dtypes, -1, sizeof ev->dtypes); /* no operand types until trace_record_op sets them */
}

void trace_record_op(Ctx *cx, int op, int line, int nargs, int64_t start_ns) {
  trace_record(cx, op, line, -1, 0, start_ns);
  if (!cx->tracing) return;
  TraceEvent *e = &cx->trace.ev[cx->trace.n - 1];
  for (int i = 0, n = 0; i < nargs && i < BFRT_MAX_OPERANDS; i++)
    if (cx->views[i].data) e->dtypes[n++] = (signed char)cx->views[i].dtype; /* not an immediate */
}

/* One metadata event: what (process_name, thread_name) of tid is name. */
static void metadata(JsonWriter *w, const char *what, int tid, const char *name) {
  jw_object(w);
  jw_key_string(w, "name", what);
  jw_key_string(w, "ph", "M");
  jw_key_int(w, "pid", 1);
  jw_key_int(w, "tid", tid);
  jw_key(w, "args");
  jw_object(w);
  jw_key_string(w, "name", name); /* names from a hand-written descriptor may hold anything */
  jw_close(w);
  jw_close(w);
}

static void event(JsonWriter *w, const bfrt *rt, int tid, const TraceEvent *e) {
  const char *name = e->op == TRACE_WAIT ? "wait" : e->op == TRACE_BARRIER ? "barrier" : rt_ops[e->op].name;
  jw_object(w);
  jw_key_string(w, "name", name);
  jw_key_string(w, "cat", e->op >= BFRT_NOPS ? "sync" : "op");
  jw_key_string(w, "ph", "X");
  jw_key_int(w, "pid", 1);
  jw_key_int(w, "tid", tid);
  jw_key(w, "ts");
  jw_fixed(w, (double)e->start_ns / 1e3, 3);
  jw_key(w, "dur");
  jw_fixed(w, (double)e->dur_ns / 1e3, 3);
  jw_key(w, "args");
  jw_object(w);
  jw_key_int(w, "line", e->line);
  if (e->dtypes[0] >= 0) {
    jw_key(w, "dtypes");
    jw_array(w);
    for (int i = 0; i < BFRT_MAX_OPERANDS && e->dtypes[i] >= 0; i++) jw_string(w, bfrt_dtype_name(e->dtypes[i]));
    jw_close(w);
  }
  if (e->op == TRACE_WAIT) {
    jw_key_string(w, "engine", rt->k->engine_names[e->engine]);
    jw_key_int(w, "threshold", e->threshold);
  }
  jw_close(w);
  jw_close(w);
}

int trace_write(const bfrt *rt, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  JsonWriter w;
  jw_init(&w, f, true);
  jw_object(&w);
  jw_key_string(&w, "displayTimeUnit", "ns");
  jw_key(&w, "traceEvents");
  jw_lines(&w);
  metadata(&w, "process_name", 0, rt->k->name);
  for (int e = 0; e < rt->k->nengines; e++) metadata(&w, "thread_name", e, rt->k->engine_names[e]);
  for (int e = 0; e < rt->k->nengines; e++)
    for (size_t i = 0; i < rt->cx[e].trace.n; i++) event(&w, rt, e, &rt->cx[e].trace.ev[i]);
  jw_close(&w);
  jw_close(&w);
  fputc('\n', f);
  int bad = ferror(f);
  return fclose(f) || bad ? -1 : 0;
}

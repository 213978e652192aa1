/* timeline.c: a kernel's runs, from its Chrome trace, as one SVG.
 *
 * This is the picture a user looks at first, so it answers one question at
 * a glance: where does the barrier baseline lose time that barrier-free
 * does not? The input is the trace `bfsync run --trace` writes (format:
 * docs/runtime.md): one process per run (`--sync=both` writes the barrier
 * run as pid 1 and the barrier-free run as pid 2), one track per engine,
 * an X event per op and per wait and barrier. The output has
 *
 *   - an overview of each run, one above the other on a common time axis,
 *     one lane per engine, coloured pixel column by pixel column by what
 *     took most of that column's time: an op class (dma, matmul,
 *     elementwise, transcendental, reduce, the cost model's classes from
 *     runtime/ops.def), a wait, a barrier, or nothing (idle);
 *   - a zoom on the first events of every run (the same window for all,
 *     so the barrier-free run visibly gets further), where every event is
 *     its own rectangle with a tooltip (the op, its operands' element
 *     types, its line, its start and end);
 *   - a time axis and a legend.
 *
 * A run is drawn to the end of its last event, which is what the trace
 * records: on a target whose DMA queues pipeline transfers, a run that ends
 * with a transfer completes its latency later (the makespan `run --json`
 * reports), so the panels say "events end at", not "makespan". Trace times
 * are nanoseconds, so in cycles they are within a cycle of the simulator's.
 *
 * The trace is read in full and checked before anything is drawn (strict
 * JSON, util/json.c; the fields the format fixes with their types and
 * ranges; at most MAX_EVENTS events), so a malformed or hostile trace gets
 * one positioned error and no SVG. The overview bins every lane in time
 * linear in its events, however long they are. */
#include "backend/timeline.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/utf8.h"
#include "runtime/ops.h"

enum {
  MAX_RUNS = 16,         /* processes in one trace */
  MAX_TRACKS = BFRT_MAX_ENGINES,
  MAX_NAME = 128,        /* bytes of a name: an op, an engine, a process */
  MAX_NAMES = 1024,      /* distinct event names */
  MAX_EVENTS = 1 << 22,  /* X events in one trace */
  MAX_PID = 1 << 20,
};
static const double MAX_MICROSECONDS = 1e12; /* 11.6 days: far beyond any run */

/* Categories: the op classes (BFRT_CLASS_*), then the two stalls. */
enum { CAT_WAIT = BFRT_NCLASSES, CAT_BARRIER, NCATS };
static const struct {
  const char *label, *colour;
} categories[NCATS] = {
    [BFRT_CLASS_DMA] = {"dma", "#4e79a7"},
    [BFRT_CLASS_MATMUL] = {"matmul", "#b07aa1"},
    [BFRT_CLASS_ELEMWISE] = {"elementwise", "#59a14f"},
    [BFRT_CLASS_TRANSCENDENTAL] = {"transcendental", "#edc948"},
    [BFRT_CLASS_REDUCE] = {"reduce", "#9c755f"},
    [CAT_WAIT] = {"wait (stall)", "#e15759"},
    [CAT_BARRIER] = {"barrier (stall)", "#7b1f1f"},
};
static const char IDLE_COLOUR[] = "#eeeeee";

enum { WIDTH = 1400, LEFT = 84, RIGHT = 24, PLOT = WIDTH - LEFT - RIGHT, LANE_H = 15, LANE_GAP = 3, PANEL_GAP = 26 };
enum { ZOOM_OPS = 40 }; /* ops in the busiest lane of the slowest run that the zoom window shows */

typedef struct Span {
  double start, end;
  int name;  /* index in Trace.names */
  int types; /* its operands' element types, "bf16 <- bf16, f32": index in Trace.names; -1: none */
  int line; /* -1: none */
  unsigned char track, cat;
} Span;

typedef struct Run {
  int pid;
  char label[MAX_NAME];
  char engine[MAX_TRACKS][MAX_NAME];
  bool used[MAX_TRACKS];
  Span *spans;
  size_t n, cap;
  double makespan;
  int nlanes, track_of[MAX_TRACKS]; /* the lanes drawn: the tracks used, in order */
} Run;

typedef struct Trace {
  JsonReader j;
  Run runs[MAX_RUNS];
  int nruns;
  size_t nevents;
  char names[MAX_NAMES][MAX_NAME];
  int nnames;
} Trace;

/* ---- Reading the trace. */

/* One event's fields, as read. */
enum { F_NAME, F_PH, F_PID, F_TID, F_TS, F_DUR, F_ARGS, NFIELDS };
static const char *const field_names[NFIELDS] = {"name", "ph", "pid", "tid", "ts", "dur", "args"};
typedef struct Event {
  size_t at;
  bool has[NFIELDS], has_arg_name;
  char name[MAX_NAME], ph[8], arg_name[MAX_NAME];
  char types[MAX_NAME]; /* args.dtypes as "DST <- SRC, SRC" ("" without) */
  double ts, dur;
  int64_t pid, tid, line;
} Event;

/* An integral number in [min, max]. */
static int read_integer(JsonReader *j, const char *what, int64_t min, int64_t max, int64_t *out) {
  size_t at = json_offset(j);
  double v;
  if (json_number(j, &v, what)) return -1;
  if (v != floor(v) || v < (double)min || v > (double)max)
    return json_error_at(j, at, "%s must be an integer from %lld to %lld", what, (long long)min, (long long)max);
  *out = (int64_t)v;
  return 0;
}

static int read_time(JsonReader *j, const char *what, double *out) {
  size_t at = json_offset(j);
  if (json_number(j, out, what)) return -1;
  if (*out < 0 || *out > MAX_MICROSECONDS)
    return json_error_at(j, at, "%s must be from 0 to %g microseconds", what, MAX_MICROSECONDS);
  return 0;
}

/* dtypes: [ string, ... ], an op's operand types (at most MAX_OPERANDS,
 * each at most MAX_DTYPE - 1 bytes), joined as "DST <- SRC, SRC". */
enum { MAX_OPERANDS = BFRT_MAX_OPERANDS, MAX_DTYPE = 16 };
static int read_dtypes(JsonReader *j, Event *e) {
  if (json_peek(j) != '[') return json_error_at(j, json_offset(j), "\"args.dtypes\" must be an array of strings");
  bool first = true;
  int more, n = 0;
  if (json_array(j)) return -1;
  while ((more = json_element(j, &first)) > 0) {
    char type[MAX_DTYPE];
    size_t at = json_offset(j);
    if (n == MAX_OPERANDS) return json_error_at(j, at, "\"args.dtypes\" has more than %d entries", MAX_OPERANDS);
    if (json_peek(j) != '"') return json_error_at(j, at, "\"args.dtypes\" must be an array of strings");
    if (json_string(j, type, sizeof type, "\"args.dtypes\" entry")) return -1;
    size_t len = strlen(e->types);
    snprintf(e->types + len, sizeof e->types - len, "%s%s", n == 0 ? "" : n == 1 ? " <- " : ", ", type);
    n++;
  }
  return more;
}

/* args: { "name": string, "line": integer, "dtypes": [string, ...], ... } */
static int read_args(JsonReader *j, Event *e) {
  char key[MAX_NAME];
  bool first = true, seen_name = false, seen_line = false, seen_dtypes = false;
  int more;
  if (json_peek(j) != '{') return json_error_at(j, json_offset(j), "\"args\" must be an object");
  if (json_object(j)) return -1;
  while ((more = json_member(j, &first, key, sizeof key)) > 0) {
    size_t at = json_offset(j);
    bool *seen = !strcmp(key, "name")     ? &seen_name
                 : !strcmp(key, "line")   ? &seen_line
                 : !strcmp(key, "dtypes") ? &seen_dtypes
                                          : NULL;
    if (seen && *seen) return json_error_at(j, at, "duplicate \"%s\" in \"args\"", key);
    if (seen) *seen = true;
    int bad = seen == &seen_name     ? json_string_cut(j, e->arg_name, sizeof e->arg_name, "\"args.name\"")
              : seen == &seen_line   ? read_integer(j, "\"args.line\"", 0, INT32_MAX, &e->line)
              : seen == &seen_dtypes ? read_dtypes(j, e)
                                     : json_skip(j);
    if (bad) return -1;
  }
  e->has_arg_name = seen_name;
  return more;
}

static int read_field(JsonReader *j, Event *e, int f) {
  switch (f) {
  case F_NAME: return json_string(j, e->name, sizeof e->name, "\"name\"");
  case F_PH: return json_string(j, e->ph, sizeof e->ph, "\"ph\"");
  case F_PID: return read_integer(j, "\"pid\"", 0, MAX_PID, &e->pid);
  case F_TID: return read_integer(j, "\"tid\"", 0, MAX_TRACKS - 1, &e->tid);
  case F_TS: return read_time(j, "\"ts\"", &e->ts);
  case F_DUR: return read_time(j, "\"dur\"", &e->dur);
  default: return read_args(j, e);
  }
}

static int read_event(JsonReader *j, Event *e) {
  *e = (Event){.at = json_offset(j), .line = -1};
  char key[MAX_NAME];
  bool first = true;
  int more;
  if (json_peek(j) != '{') return json_error_at(j, e->at, "an event must be an object");
  if (json_object(j)) return -1;
  while ((more = json_member(j, &first, key, sizeof key)) > 0) {
    int f = 0;
    while (f < NFIELDS && strcmp(key, field_names[f])) f++;
    if (f == NFIELDS) {
      if (json_skip(j)) return -1;
      continue;
    }
    if (e->has[f]) return json_error_at(j, json_offset(j), "duplicate \"%s\" in an event", key);
    e->has[f] = true;
    if (read_field(j, e, f)) return -1;
  }
  return more;
}

static Run *run_of(Trace *t, const Event *e) {
  for (int r = 0; r < t->nruns; r++)
    if (t->runs[r].pid == e->pid) return &t->runs[r];
  if (t->nruns == MAX_RUNS) {
    json_error_at(&t->j, e->at, "more than %d processes in one trace", MAX_RUNS);
    return NULL;
  }
  Run *r = &t->runs[t->nruns++];
  r->pid = (int)e->pid;
  return r;
}

/* name's index in t->names (an event's name, or its operand types). */
static int name_index(Trace *t, const Event *e, const char *name) {
  for (int i = 0; i < t->nnames; i++)
    if (!strcmp(t->names[i], name)) return i;
  if (t->nnames == MAX_NAMES)
    return json_error_at(&t->j, e->at, "more than %d distinct event names and operand types", MAX_NAMES);
  snprintf(t->names[t->nnames], sizeof t->names[t->nnames], "%s", name);
  return t->nnames++;
}

static int category(const char *name) {
  if (!strcmp(name, "wait")) return CAT_WAIT;
  if (!strcmp(name, "barrier")) return CAT_BARRIER;
  int op = op_lookup(name);
  return op < 0 ? BFRT_CLASS_ELEMWISE : op_info(op)->cls;
}

static int add_span(Trace *t, Run *r, const Event *e) {
  int name = name_index(t, e, e->name), types = e->types[0] ? name_index(t, e, e->types) : -1;
  if (name < 0 || (e->types[0] && types < 0)) return -1;
  if (t->nevents == MAX_EVENTS) return json_error_at(&t->j, e->at, "more than %d events in one trace", MAX_EVENTS);
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 256;
    Span *spans = realloc(r->spans, cap * sizeof *spans);
    if (!spans) return json_error_at(&t->j, e->at, "out of memory reading the trace");
    r->spans = spans;
    r->cap = cap;
  }
  r->spans[r->n++] = (Span){e->ts, e->ts + e->dur, name, types, (int)e->line, (unsigned char)e->tid,
                            (unsigned char)category(e->name)};
  t->nevents++;
  r->used[e->tid] = true;
  return 0;
}

/* What an event contributes: a process or track name (ph M), a span (ph X). */
static int use_event(Trace *t, const Event *e) {
  bool meta = !strcmp(e->ph, "M"), span = !strcmp(e->ph, "X");
  if (!meta && !span) return 0;
  static const int needed[] = {F_NAME, F_PID, F_TID};
  for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
    if (!e->has[needed[i]])
      return json_error_at(&t->j, e->at, "a \"ph\": \"%s\" event needs \"%s\"", e->ph, field_names[needed[i]]);
  if (span && !e->has[F_TS]) return json_error_at(&t->j, e->at, "a \"ph\": \"X\" event needs \"ts\"");
  bool process = !strcmp(e->name, "process_name"), thread = !strcmp(e->name, "thread_name");
  if (meta && !process && !thread) return 0;
  if (meta && !e->has_arg_name) return json_error_at(&t->j, e->at, "a %s event needs \"args\": {\"name\": ...}", e->name);
  Run *r = run_of(t, e);
  if (!r) return -1;
  if (span) return add_span(t, r, e);
  if (process) memcpy(r->label, e->arg_name, sizeof r->label);
  else {
    memcpy(r->engine[e->tid], e->arg_name, sizeof r->engine[e->tid]);
    r->used[e->tid] = true;
  }
  return 0;
}

/* document: { "traceEvents": [ event, ... ], ... } | [ event, ... ] */
static int read_trace(Trace *t) {
  JsonReader *j = &t->j;
  char key[MAX_NAME];
  bool first = true;
  int more = 1;
  if (json_peek(j) != '[') {
    if (json_peek(j) != '{') return json_error_at(j, json_offset(j), "a trace is an object with \"traceEvents\" (or an array of events)");
    if (json_object(j)) return -1;
    while ((more = json_member(j, &first, key, sizeof key)) > 0 && strcmp(key, "traceEvents"))
      if (json_skip(j)) return -1;
    if (more <= 0) return more < 0 ? -1 : json_error_at(j, 0, "no \"traceEvents\" in the trace");
  }
  size_t at = json_offset(j);
  if (json_peek(j) != '[') return json_error_at(j, at, "\"traceEvents\" must be an array");
  bool first_event = true;
  Event e;
  if (json_array(j)) return -1;
  while ((more = json_element(j, &first_event)) > 0)
    if (read_event(j, &e) || use_event(t, &e)) return -1;
  if (more < 0) return -1;
  if (j->depth > 0) /* the rest of the top-level object */
    while ((more = json_member(j, &first, key, sizeof key)) > 0)
      if (!strcmp(key, "traceEvents") ? json_error_at(j, json_offset(j), "duplicate \"traceEvents\"") : json_skip(j)) return -1;
  if (more < 0 || json_end(j)) return -1;
  if (!t->nruns) return json_error_at(j, at, "nothing to draw: no thread_name and no \"ph\": \"X\" event");
  return 0;
}

/* ---- Preparing the runs: pid order, lanes, time scale, makespans. */

static int by_pid(const void *a, const void *b) { return ((const Run *)a)->pid - ((const Run *)b)->pid; }

static void prepare(Trace *t, double scale) {
  qsort(t->runs, (size_t)t->nruns, sizeof t->runs[0], by_pid);
  for (int i = 0; i < t->nruns; i++) {
    Run *r = &t->runs[i];
    if (!r->label[0]) snprintf(r->label, sizeof r->label, "process %d", r->pid);
    for (int k = 0; k < MAX_TRACKS; k++)
      if (r->used[k]) {
        if (!r->engine[k][0]) snprintf(r->engine[k], sizeof r->engine[k], "engine %d", k);
        r->track_of[r->nlanes++] = k;
      }
    for (size_t s = 0; s < r->n; s++) {
      r->spans[s].start *= scale;
      r->spans[s].end *= scale;
      r->makespan = fmax(r->makespan, r->spans[s].end);
    }
  }
}

/* ---- Drawing. */

/* Text for XML: escaped, and what XML 1.0 cannot hold (a control
 * character, U+FFFE, U+FFFF, a byte of malformed UTF-8: a title or a file
 * name may have one) as '?'. */
static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    int len = c >= 0x80 ? utf8_length((const unsigned char *)s, 4) : 1; /* (a NUL ends a sequence) */
    if (c == '&') fputs("&amp;", f);
    else if (c == '<') fputs("&lt;", f);
    else if (c == '>') fputs("&gt;", f);
    else if ((c < 0x20 && c != '\t' && c != '\n') || !len) fputc('?', f);
    else if (c == 0xef && (unsigned char)s[1] == 0xbf && ((unsigned char)s[2] & 0xfe) == 0xbe) {
      fputc('?', f);
      s += 2;
    } else {
      fwrite(s, 1, (size_t)len, f);
      s += len - 1;
    }
  }
}

/* Python's "%g" % round(t, 3) and friends: 1.5k, 2M. */
static void fmt_time(char *buf, size_t size, double t) {
  if (t >= 1e6) snprintf(buf, size, "%gM", round(t / 1e6 * 1e3) / 1e3);
  else if (t >= 1e4) snprintf(buf, size, "%gk", round(t / 1e3 * 1e3) / 1e3);
  else snprintf(buf, size, "%g", round(t * 1e3) / 1e3);
}

/* 12,345 */
static void fmt_count(char *buf, size_t size, double v) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%.0f", round(v)), o = 0;
  for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
    if (i && (n - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = 0;
}

/* A 1, 2 or 5 times a power of ten step giving about 8 ticks. */
static double nice_step(double span) {
  double raw = fmax(span / 8, 1e-9), power = 1;
  if (raw >= 1)
    while (power * 10 <= raw) power *= 10;
  while (power > raw) power /= 10;
  static const double mults[] = {1, 2, 5, 10};
  for (int m = 0; m < 4; m++)
    if (power * mults[m] >= raw) return power * mults[m];
  return power * 10;
}

/* A time axis under a view covering [0, t1]; the next y. */
static int axis(FILE *f, int y, double t1, const char *unit) {
  char label[32];
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", LEFT, y, WIDTH - RIGHT, y);
  double step = nice_step(t1);
  for (int k = 0; k * step <= t1 + 1e-9; k++) {
    double x = LEFT + k * step / t1 * PLOT;
    fmt_time(label, sizeof label, k * step);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>\n", x, y, x, y + 4);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, y + 15, label);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", WIDTH - RIGHT, y + 28);
  xml_text(f, unit);
  fputs("</text>\n", f);
  return y + 34;
}

/* Per pixel column of one lane, the category that took most of its time
 * (-1: idle). Spans covering whole columns count through a difference
 * array, so the work is linear in the spans, whatever their length. */
static void binned_lane(const Run *r, int track, double t1, int cols[PLOT]) {
  double part[PLOT][NCATS] = {{0}}, full[PLOT + 1][NCATS] = {{0}};
  double per_col = t1 / PLOT;
  for (size_t i = 0; i < r->n; i++) {
    const Span *s = &r->spans[i];
    if (s->track != track || s->end <= s->start) continue;
    double first_f = floor(s->start / per_col), last_f = floor(s->end / per_col);
    int first = first_f < 0 ? 0 : first_f >= PLOT ? PLOT : (int)first_f;
    int last = last_f >= PLOT ? PLOT - 1 : (int)last_f;
    if (first > last) continue;
    if (first == last) {
      part[first][s->cat] += fmin(s->end, (first + 1) * per_col) - fmax(s->start, first * per_col);
      continue;
    }
    part[first][s->cat] += (first + 1) * per_col - fmax(s->start, first * per_col);
    part[last][s->cat] += fmin(s->end, (last + 1) * per_col) - last * per_col;
    full[first + 1][s->cat] += 1;
    full[last][s->cat] -= 1;
  }
  double covering[NCATS] = {0};
  for (int c = 0; c < PLOT; c++) {
    double sum = 0, best_time = 0;
    int best = -1;
    for (int k = 0; k < NCATS; k++) {
      covering[k] += full[c][k];
      double time = part[c][k] + covering[k] * per_col;
      sum += time;
      if (time > best_time) best_time = time, best = k;
    }
    cols[c] = best >= 0 && best_time >= per_col - sum ? best : -1;
  }
}

static void overview_lane(FILE *f, const Run *r, int track, double t1, int y) {
  int cols[PLOT];
  binned_lane(r, track, t1, cols);
  for (int c = 0, end; c < PLOT; c = end + 1) {
    for (end = c; end + 1 < PLOT && cols[end + 1] == cols[c];) end++;
    if (cols[c] >= 0)
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", LEFT + c, y, end - c + 1,
              LANE_H, categories[cols[c]].colour);
  }
}

static void zoom_lane(FILE *f, const Trace *t, const Run *r, int track, double t1, int y) {
  char a[32], b[32];
  for (size_t i = 0; i < r->n; i++) {
    const Span *s = &r->spans[i];
    if (s->track != track || s->start >= t1) continue;
    double x0 = LEFT + s->start / t1 * PLOT, x1 = LEFT + fmin(s->end, t1) / t1 * PLOT;
    fmt_time(a, sizeof a, s->start);
    fmt_time(b, sizeof b, s->end);
    fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
               "stroke-width=\"0.3\"><title>", x0, y, fmax(x1 - x0, 0.6), LANE_H, categories[s->cat].colour);
    xml_text(f, t->names[s->name]);
    if (s->types >= 0) {
      fputc(' ', f);
      xml_text(f, t->names[s->types]);
    }
    if (s->line >= 0) fprintf(f, " (line %d)", s->line);
    fprintf(f, " %s..%s</title></rect>\n", a, b);
  }
}

/* One panel per run, a lane per engine, over [0, t1]; the next y. */
static int view(FILE *f, const Trace *t, int y, double t1, bool zoom, const char *unit) {
  char count[48];
  for (int i = 0; i < t->nruns; i++) {
    const Run *r = &t->runs[i];
    fmt_count(count, sizeof count, r->makespan);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", LEFT, y + 12);
    xml_text(f, r->label);
    fprintf(f, ": events end at %s ", count);
    xml_text(f, unit);
    fputs("</text>\n", f);
    y += 18;
    for (int lane = 0; lane < r->nlanes; lane++) {
      int track = r->track_of[lane];
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", LEFT, y, PLOT, LANE_H, IDLE_COLOUR);
      fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 6, y + LANE_H - 3);
      xml_text(f, r->engine[track]);
      fputs("</text>\n", f);
      if (zoom) zoom_lane(f, t, r, track, t1, y);
      else overview_lane(f, r, track, t1, y);
      y += LANE_H + LANE_GAP;
    }
    if (!zoom && r->makespan <= t1) {
      double x = LEFT + r->makespan / t1 * PLOT;
      fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" stroke-width=\"1.5\"/>\n", x,
              y - r->nlanes * (LANE_H + LANE_GAP) - 4, x, y);
    }
    y += 6;
  }
  return axis(f, y, t1, unit) + PANEL_GAP;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The end of the ZOOM_OPS-th op in the busiest lane of the slowest run. */
static double zoom_window(const Trace *t) {
  const Run *slow = &t->runs[0];
  for (int i = 1; i < t->nruns; i++)
    if (t->runs[i].makespan > slow->makespan) slow = &t->runs[i];
  size_t ops[MAX_TRACKS] = {0};
  int busiest = -1;
  for (size_t i = 0; i < slow->n; i++)
    if (slow->spans[i].cat < BFRT_NCLASSES) ops[slow->spans[i].track]++;
  for (int lane = 0; lane < slow->nlanes; lane++)
    if (busiest < 0 || ops[slow->track_of[lane]] > ops[busiest]) busiest = slow->track_of[lane];
  double best = slow->makespan;
  if (busiest >= 0 && ops[busiest] > ZOOM_OPS) {
    double *ends = malloc(ops[busiest] * sizeof *ends);
    size_t n = 0;
    for (size_t i = 0; ends && i < slow->n; i++)
      if (slow->spans[i].track == busiest && slow->spans[i].cat < BFRT_NCLASSES) ends[n++] = slow->spans[i].end;
    if (ends) {
      qsort(ends, n, sizeof *ends, by_value);
      best = ends[ZOOM_OPS - 1];
    }
    free(ends);
  }
  return fmax(best, 1.0);
}

static int legend(FILE *f, int y) {
  int x = LEFT;
  for (int k = 0; k <= NCATS; k++) {
    const char *label = k < NCATS ? categories[k].label : "idle";
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"/>\n",
            x, y, k < NCATS ? categories[k].colour : IDLE_COLOUR);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 19, y + 10, label);
    x += 34 + 7 * (int)strlen(label);
  }
  return y + 24;
}

/* The body goes to a memory stream first: the height is known at its end. */
static int render(const Trace *t, const TimelineOptions *opt, FILE *out) {
  double t_all = 1.0;
  for (int i = 0; i < t->nruns; i++) t_all = fmax(t_all, t->runs[i].makespan);
  double t_zoom = fmin(zoom_window(t), t_all);
  char *body = NULL, zoom_label[32];
  size_t size = 0;
  FILE *f = open_memstream(&body, &size);
  if (!f) return -1;
  int y = 28;
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"16\" font-weight=\"bold\">", LEFT, y);
  xml_text(f, opt->title);
  fputs("</text>\n", f);
  y = legend(f, y + 20);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-style=\"italic\">Whole run (each pixel column shows what took most of "
             "its time; black line: end of the run)</text>\n", LEFT, y + 10);
  y = view(f, t, y + 16, t_all, false, opt->unit);
  fmt_time(zoom_label, sizeof zoom_label, t_zoom);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-style=\"italic\">Zoom: the first %s ", LEFT, y + 10, zoom_label);
  xml_text(f, opt->unit);
  fputs(" of every run (every event drawn)</text>\n", f);
  y = view(f, t, y + 16, t_zoom, true, opt->unit);
  if (fclose(f)) {
    free(body);
    return -1;
  }
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n", WIDTH, y, WIDTH, y);
  fwrite(body, 1, size, out);
  fputs("</svg>\n", out);
  free(body);
  return 0;
}

int timeline_draw(const char *path, const char *text, size_t len, const TimelineOptions *opt, FILE *out,
                  char *err, size_t errsize) {
  Trace *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errsize, "%s: error: out of memory", path);
    return -1;
  }
  json_init(&t->j, path, text, len);
  int status = read_trace(t);
  if (status == 0) {
    prepare(t, opt->time_scale);
    if (render(t, opt, out)) snprintf(t->j.error, sizeof t->j.error, "%s: error: out of memory drawing the timeline", path);
    status = t->j.error[0] ? -1 : 0;
  }
  if (status) snprintf(err, errsize, "%s", t->j.error);
  for (int i = 0; i < t->nruns; i++) free(t->runs[i].spans);
  free(t);
  return status;
}

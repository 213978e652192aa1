/* check.c: the happens-before race checker (bfrt_options.check).
 *
 * A real execution shows one interleaving; a missing wait may still have
 * produced the right numbers by luck. The checker instead asks, for every
 * pair of conflicting accesses (same tile slot, same element of a tile some
 * operand has viewed part of, or same hbm element, at least one a write,
 * on different engines), whether the synchronization orders
 * them, whatever the timing. It does so with vector clocks:
 *
 *   - vc[c][e] is the number of e's ops that happen before engine c's
 *     current point; an op's position is its engine's completed count.
 *   - When an op completes, its engine records a snapshot of its clock
 *     (before the counter increment, so a waiter that sees the increment
 *     finds it).
 *   - A wait S_e >= T joins e's snapshot at its T-th op since the last
 *     barrier: the wait orders exactly those ops, not whatever the counter
 *     happened to read, so the verdict does not depend on the interleaving.
 *   - A barrier orders everything before it: every clock takes every
 *     engine's position at the barrier (which the executor records in
 *     rt->barrier_positions), and those positions become the bases that
 *     later thresholds count from, since counters restart at 0.
 *
 * Each location remembers its last write and, per engine, its last read
 * (engine, position, line). Before an op runs, its reads are checked
 * against the last write and its write against the last write and every
 * read; an access by another engine at position q is ordered iff the
 * current clock has vc[c][e] >= q. One race is counted per operand of an
 * op that has an unordered conflict; the first few are described with both
 * source lines. A tile is tracked per slot until an op views part of it;
 * from then on per element, each starting from its slot's state, so a view
 * races only with what touched its elements. The shadow state is behind
 * one mutex: the checker trades speed for simplicity, which is fine for a
 * testing mode. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { MAX_REPORTED = 4 };

typedef struct Write {
  int64_t pos; /* 0: never written */
  int engine, line;
} Write;

typedef struct Read {
  int64_t pos; /* 0: never read by this engine */
  int line;
} Read;

typedef struct History {
  int64_t *snap; /* snapshot after the k-th op at [(k - 1) * n] */
  int64_t len, cap;
} History;

struct Checker {
  int n, ntiles;
  pthread_mutex_t mu;
  int64_t vc[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES];
  int64_t base[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES]; /* per engine: positions at its last barrier */
  History history[BFRT_MAX_ENGINES];
  int64_t *tile_loc, *tensor_loc; /* first location of each tile, tensor */
  Write *writes;                  /* per location */
  Read *reads;                    /* per location and engine */
  /* per tile: NULL until an op views part of it; then its own locations,
   * one per element of its slots laid end to end (elements) */
  Write **tile_writes;
  Read **tile_reads;
  int64_t races;
  char report[1024];
  size_t report_len;
};

/* ---- Set-up. */

static int64_t count_locations(const bfrt *rt, Checker *ch) {
  int64_t n = 0;
  for (int t = 0; t < rt->k->ntiles; t++) {
    ch->tile_loc[t] = n;
    n += rt->k->tiles[t].slots;
  }
  for (int t = 0; t < rt->k->ntensors; t++) {
    ch->tensor_loc[t] = n;
    n += rt->tensors[t].rows * rt->tensors[t].cols;
  }
  return n;
}

Checker *check_new(const bfrt *rt) {
  Checker *ch = calloc(1, sizeof *ch);
  if (!ch) return NULL;
  ch->n = rt->k->nengines;
  ch->ntiles = rt->k->ntiles;
  pthread_mutex_init(&ch->mu, NULL);
  ch->tile_loc = calloc((size_t)rt->k->ntiles + 1, sizeof *ch->tile_loc);
  ch->tile_writes = calloc((size_t)rt->k->ntiles + 1, sizeof *ch->tile_writes);
  ch->tile_reads = calloc((size_t)rt->k->ntiles + 1, sizeof *ch->tile_reads);
  ch->tensor_loc = calloc((size_t)rt->k->ntensors + 1, sizeof *ch->tensor_loc);
  if (ch->tile_loc && ch->tensor_loc) {
    size_t locations = (size_t)count_locations(rt, ch) + 1;
    ch->writes = calloc(locations, sizeof *ch->writes);
    ch->reads = calloc(locations * (size_t)ch->n, sizeof *ch->reads);
  }
  if (!ch->writes || !ch->reads || !ch->tile_writes || !ch->tile_reads) {
    check_free(ch);
    return NULL;
  }
  return ch;
}

void check_free(Checker *ch) {
  if (!ch) return;
  for (int e = 0; e < ch->n; e++) free(ch->history[e].snap);
  for (int t = 0; ch->tile_writes && ch->tile_reads && t < ch->ntiles; t++) {
    free(ch->tile_writes[t]);
    free(ch->tile_reads[t]);
  }
  free(ch->tile_writes);
  free(ch->tile_reads);
  free(ch->tile_loc);
  free(ch->tensor_loc);
  free(ch->writes);
  free(ch->reads);
  pthread_mutex_destroy(&ch->mu);
  free(ch);
}

int64_t check_races(const Checker *ch, const char **report) {
  *report = ch->report;
  return ch->races;
}

/* ---- Accesses. */

typedef struct Access {
  Ctx *cx;
  int write;
  char what[64]; /* the operand as written: x[1], Y[2, 0] */
} Access;

static void describe(Access *a, const bfrt_arg *arg) {
  const bfrt_kernel *k = a->cx->rt->k;
  if (arg->kind == BFRT_ARG_TILE && arg->view)
    snprintf(a->what, sizeof a->what, "%s[%lld][%lld:%lld, %lld:%lld]", k->tiles[arg->id].name, (long long)arg->a,
             (long long)arg->r0, (long long)(arg->r0 + arg->rn), (long long)arg->c0, (long long)(arg->c0 + arg->cn));
  else if (arg->kind == BFRT_ARG_TILE)
    snprintf(a->what, sizeof a->what, "%s[%lld]", k->tiles[arg->id].name, (long long)arg->a);
  else if (arg->view == 2)
    snprintf(a->what, sizeof a->what, "%s[%s[%lld, %lld]..., %lld:%lld]", k->tensors[arg->id].name,
             k->tensors[arg->gi].name, (long long)arg->gr, (long long)arg->gc, (long long)arg->b,
             (long long)(arg->b + arg->cn));
  else
    snprintf(a->what, sizeof a->what, "%s[%lld, %lld]", k->tensors[arg->id].name, (long long)arg->a,
             (long long)arg->b);
}

static void report(Checker *ch, const Access *a, int other_engine, int other_line, int other_write) {
  const char *const *names = a->cx->rt->k->engine_names;
  if (++ch->races > MAX_REPORTED || ch->report_len >= sizeof ch->report) {
    if (ch->races == MAX_REPORTED + 1 && ch->report_len < sizeof ch->report)
      ch->report_len += (size_t)snprintf(ch->report + ch->report_len, sizeof ch->report - ch->report_len, "\n  ...");
    return;
  }
  ch->report_len += (size_t)snprintf(
      ch->report + ch->report_len, sizeof ch->report - ch->report_len,
      "\n  %s %s on %s (line %d) and %s on %s (line %d) are not ordered by any wait",
      a->write ? "write of" : "read of", a->what, names[a->cx->engine], a->cx->line,
      other_write ? "a write" : "a read", names[other_engine], other_line);
}

/* Whether cx's engine is ordered after engine e's op at pos. */
static int ordered(const Checker *ch, const Ctx *cx, int e, int64_t pos) {
  return e == cx->engine || ch->vc[cx->engine][e] >= pos;
}

/* Check and record one access to the location of w and reads; 1 if it races. */
static int touch_at(Checker *ch, const Access *a, Write *w, Read *reads, int reported) {
  Ctx *cx = a->cx;
  int race = 0;
  if (w->pos && !ordered(ch, cx, w->engine, w->pos)) {
    if (!reported) report(ch, a, w->engine, w->line, 1);
    race = 1;
  }
  for (int e = 0; a->write && !race && e < ch->n; e++)
    if (reads[e].pos && !ordered(ch, cx, e, reads[e].pos)) {
      if (!reported) report(ch, a, e, reads[e].line, 0);
      race = 1;
    }
  int64_t pos = cx->completed + 1;
  if (a->write) {
    *w = (Write){pos, cx->engine, cx->line};
    memset(reads, 0, (size_t)ch->n * sizeof *reads);
  } else {
    reads[cx->engine] = (Read){pos, cx->line};
  }
  return race;
}

static int touch(Checker *ch, const Access *a, int64_t loc, int reported) {
  return touch_at(ch, a, &ch->writes[loc], &ch->reads[loc * ch->n], reported);
}

/* Tile t per element from now on, each element starting from its slot's
 * state (what happened to the whole slot happened to each element); 0 when
 * out of memory. */
static int split_tile(Checker *ch, const bfrt_tile_desc *d, int t) {
  int64_t per_slot = d->rows * d->cols, cells = d->slots * per_slot;
  ch->tile_writes[t] = calloc((size_t)cells, sizeof(Write));
  ch->tile_reads[t] = calloc((size_t)cells * (size_t)ch->n, sizeof(Read));
  if (!ch->tile_writes[t] || !ch->tile_reads[t]) return 0;
  for (int64_t i = 0; i < cells; i++) {
    int64_t loc = ch->tile_loc[t] + i / per_slot;
    ch->tile_writes[t][i] = ch->writes[loc];
    memcpy(&ch->tile_reads[t][i * ch->n], &ch->reads[loc * ch->n], (size_t)ch->n * sizeof(Read));
  }
  return 1;
}

/* Every location operand i of the current op touches. */
static void touch_operand(Checker *ch, Access *a, const bfrt_arg *arg, SemView v) {
  describe(a, arg);
  int reported = 0;
  if (arg->kind == BFRT_ARG_TILE) {
    const bfrt_tile_desc *d = &a->cx->rt->k->tiles[arg->id];
    if (!ch->tile_writes[arg->id] && !arg->view) {
      touch(ch, a, ch->tile_loc[arg->id] + arg->a, 0);
      return;
    }
    if (!ch->tile_writes[arg->id] && !split_tile(ch, d, arg->id)) {
      pthread_mutex_unlock(&ch->mu);
      rt_fail(a->cx, a->cx->line, "out of memory in the race checker");
    }
    int64_t first = v.data - a->cx->rt->tiles[arg->id];
    for (int64_t i = 0; i < v.rows; i++)
      for (int64_t j = 0; j < v.cols; j++) {
        int64_t at = first + i * v.stride + j;
        reported |= touch_at(ch, a, &ch->tile_writes[arg->id][at], &ch->tile_reads[arg->id][at * ch->n], reported);
      }
    return;
  }
  const Tensor *t = &a->cx->rt->tensors[arg->id];
  if (arg->view == 2) { /* rows by index: each row once per partition (a duplicate is this op's own) */
    for (int64_t i = 0; i < v.rows; i++)
      for (int64_t j = 0; j < v.cols; j++)
        reported |= touch(ch, a, ch->tensor_loc[arg->id] + rt_gather_row(a->cx, arg, i) * t->cols + arg->b + j, reported);
    return;
  }
  int64_t first = (v.data - t->data) + ch->tensor_loc[arg->id];
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++) reported |= touch(ch, a, first + i * t->cols + j, reported);
}

void check_op(Ctx *cx, int op, const bfrt_arg *args, int nargs) {
  Checker *ch = cx->rt->checker;
  pthread_mutex_lock(&ch->mu);
  Access a = {.cx = cx, .write = 0};
  for (int i = 0; i < nargs; i++) /* the reads first: an accumulator is read, then written */
    if (args[i].kind != BFRT_ARG_IMM && bfrt_op_reads(op, i)) touch_operand(ch, &a, &args[i], cx->views[i]);
  a.write = 1;
  for (int i = 0; i < nargs; i++)
    if (args[i].kind != BFRT_ARG_IMM && bfrt_op_writes(op, i)) touch_operand(ch, &a, &args[i], cx->views[i]);
  pthread_mutex_unlock(&ch->mu);
}

/* ---- Synchronization. */

void check_complete(Ctx *cx) {
  Checker *ch = cx->rt->checker;
  int c = cx->engine;
  ch->vc[c][c] = cx->completed;
  pthread_mutex_lock(&ch->mu);
  History *h = &ch->history[c];
  if (h->len == h->cap) {
    int64_t cap = h->cap ? 2 * h->cap : 1024;
    int64_t *snap = realloc(h->snap, (size_t)(cap * ch->n) * sizeof *snap);
    if (!snap) {
      pthread_mutex_unlock(&ch->mu);
      rt_fail(cx, cx->line, "out of memory in the race checker");
    }
    h->snap = snap;
    h->cap = cap;
  }
  memcpy(&h->snap[h->len++ * ch->n], ch->vc[c], (size_t)ch->n * sizeof(int64_t));
  pthread_mutex_unlock(&ch->mu);
}

void check_wait(Ctx *cx, int engine, int64_t threshold) {
  Checker *ch = cx->rt->checker;
  int c = cx->engine;
  if (threshold <= 0) return;
  int64_t pos = ch->base[c][engine] + threshold;
  pthread_mutex_lock(&ch->mu);
  const int64_t *snap = pos <= ch->history[engine].len ? &ch->history[engine].snap[(pos - 1) * ch->n] : NULL;
  for (int e = 0; snap && e < ch->n; e++)
    if (snap[e] > ch->vc[c][e]) ch->vc[c][e] = snap[e];
  pthread_mutex_unlock(&ch->mu);
}

void check_barrier(Ctx *cx) {
  Checker *ch = cx->rt->checker;
  int c = cx->engine;
  for (int e = 0; e < ch->n; e++) {
    int64_t pos = cx->rt->barrier_positions[e];
    if (pos > ch->vc[c][e]) ch->vc[c][e] = pos;
    ch->base[c][e] = pos;
  }
}

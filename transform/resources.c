/* resources.c: what each engine's stream needs of the machine, how it is
 * made to fit, and whether the target has it.
 *
 * A hardware engine runs its stream with a few semaphores it can wait on
 * and a few integer registers in its sequencer; bfsync's bookkeeping must
 * fit them (issue 12). This pass counts, per engine, from the IR:
 *
 *   semaphores  the counters the engine waits on (one per producer engine;
 *               the paper's one counter per engine, shared by every loop);
 *   registers   the sum of
 *     loops        at the deepest nesting, one count per loop level (its
 *                  induction variable, or a count of the iterations left
 *                  when the body never reads the variable) and the level's
 *                  evaluated bound when the variable is kept and the bound
 *                  is computed (a constant or a parameter is an operand of
 *                  the loop's compare);
 *     shared       the bookkeeping scalars (running counts, device reads,
 *                  ir.h IR_SET) and the `known` guards (one per counter
 *                  waited on), two sharing a register when their live
 *                  ranges do not overlap (shared_registers);
 *     last read    one per counter the engine tracks (ir_tracks), the count
 *                  it last read, from which it extends the counter's low B
 *                  bits (docs/algorithm.md, section 7); none with 64-bit
 *                  counters, which are never extended;
 *     temporaries  the most that one node needs at once to evaluate its
 *                  expressions: Sethi-Ullman numbers, with constants and
 *                  parameters as immediates (parameters are launch-time
 *                  constants) and loop variables and scalars already in
 *                  registers;
 *   scratch     the tracking arrays (ir.h IR_STORE) and the values spilled
 *               to fit, 8 bytes a cell or value;
 *   bookkeeping the operations per instruction, measured at run time by
 *               the oracle (`bfsync verify`), not here.
 *
 * Sharing is free: it changes no operation. When a kind sets `registers`
 * and a stream still needs more, resources_of keeps values in scratch
 * instead (spilling): scalars, guards, last-read counts and loop bounds,
 * the cheapest first by their static accesses weighted 8 per loop level
 * (resources_of), then those the fit does not need put back. A value in scratch costs one scratch
 * operation per access (a load where it is read, a store where it is
 * written), which the backend emits as bfrt_spill and the simulator
 * charges like a bookkeeping operation; the loaded value needs a
 * temporary, which the count includes. Loop counts are never spilled.
 * What does not fit then is an error naming the engine, the resource,
 * what it needs and what it has; nothing falls back to a barrier. */
#include "transform/resources.h"

#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "target/target.h"
#include "transform/ir.h"

static int max2(int a, int b) { return a > b ? a : b; }

static int by_descending(const void *a, const void *b) { return *(const int *)b - *(const int *)a; }

/* Registers to compute k values and hold all of them at once: computed
 * one after the other, the hungriest first, each held while the next is
 * computed (needs of 0 are leaves, held already). */
static int hold(int *needs, int k) {
  qsort(needs, (size_t)k, sizeof *needs, by_descending);
  int most = 0, held = 0;
  for (int i = 0; i < k && needs[i] > 0; i++) most = max2(most, needs[i] + held++);
  return most;
}

static int value_of(int need) { return need ? need : 1; } /* a computed value takes a register */

/* Registers to compute x into a register of its own (0 when x is a
 * constant, a parameter or a value in a register). */
static int need(const IrExpr *x, const SpillPlan *sp) {
  if (!x) return 0;
  switch (x->kind) {
  case IX_CONST:
  case IX_PARAM:
  case IX_LOOPVAR: return 0;
  case IX_VAR: return sp->scalar[x->id] ? 1 : 0;
  case IX_LOAD:
  case IX_NOT: return value_of(need(x->a, sp));
  case IX_SELECT: return max2(value_of(need(x->a, sp)), max2(need(x->b, sp), need(x->c, sp)));
  default: {
    int n[2] = {need(x->a, sp), need(x->b, sp)};
    return value_of(hold(n, 2));
  }
  }
}

/* Registers to compute x into an existing register (a destination). */
static int need_into(const IrExpr *x, const SpillPlan *sp) { return max2(0, need(x, sp) - 1); }

static bool reads_loop_var(const IrExpr *x, int loop_id) {
  if (!x) return false;
  if (x->kind == IX_LOOPVAR) return x->id == loop_id;
  return reads_loop_var(x->a, loop_id) || reads_loop_var(x->b, loop_id) || reads_loop_var(x->c, loop_id);
}

static bool body_reads_loop_var(const IrNode *n, int loop_id) {
  for (; n; n = n->next) {
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++)
      if (reads_loop_var(xs[i], loop_id)) return true;
    if ((n->kind == IR_LOOP || n->kind == IR_IF) &&
        (body_reads_loop_var(n->body, loop_id) || body_reads_loop_var(n->orelse, loop_id)))
      return true;
  }
  return false;
}

/* A loop keeps its bound in a register when it keeps its variable (the
 * body reads it) and the bound is not an operand of the compare: a
 * constant, or a parameter read from the kernel's arguments. */
static bool holds_bound(const IrNode *loop) {
  return loop->hi->kind != IX_CONST && loop->hi->kind != IX_PARAM && body_reads_loop_var(loop->body, loop->loop_id);
}

/* ---- Live ranges of the bookkeeping scalars. */

/* An access to a value that shares registers by live range: a
 * bookkeeping scalar (var < nvars) or the guard of engine var - nvars. */
typedef struct Occurrence {
  int var, pos;
  bool set;
  const IrNode *parent; /* innermost enclosing loop or conditional, NULL at top level */
  int root;             /* position of the top-level node around it */
} Occurrence;

typedef struct LoopRange {
  const IrNode *loop;
  int first, last;      /* positions of its body */
  int occ_first, occ_end; /* its body's occurrences */
} LoopRange;

typedef struct Walk {
  const Program *p;
  const SpillPlan *sp;
  int engine;
  EngineResources *r;
  uint32_t tracks;
  int pos, root;
  Occurrence *occ;
  int nocc, occ_cap;
  LoopRange *loops;
  int nloops, loop_cap;
} Walk;

static void add_occurrence(Walk *w, int var, bool set, const IrNode *parent) {
  if (w->nocc == w->occ_cap) {
    w->occ_cap = w->occ_cap ? 2 * w->occ_cap : 64;
    w->occ = realloc(w->occ, sizeof *w->occ * (size_t)w->occ_cap);
    if (!w->occ) bug("out of memory");
  }
  /* A node reads before it sets: a value it reads last can share a register
   * with one it sets (`set b = a`). */
  w->occ[w->nocc++] = (Occurrence){var, 2 * w->pos + set, set, parent, 2 * w->root};
}

static void reads_of(Walk *w, const IrExpr *x, const IrNode *parent) {
  if (!x) return;
  if (x->kind == IX_VAR && !w->sp->scalar[x->id]) add_occurrence(w, x->id, false, parent);
  reads_of(w, x->a, parent);
  reads_of(w, x->b, parent);
  reads_of(w, x->c, parent);
}

static int by_position(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : x[1] - y[1]; /* a start before an end at one point */
}

/* Registers the scalars and guards not in scratch need: the most live at
 * once. A value lives from its first to its last access in program order;
 * inside a loop whose iterations do not each set it first (at the body's
 * top level), through the whole loop; and when its first access reads it
 * (its initial 0), from the start of the top-level node around that
 * access, which every path to any access of it enters first: the 0 is put
 * in the register there. */
static int shared_registers(Walk *w, int nvars) {
  if (!nvars || !w->nocc) return 0;
  int *lo = malloc(sizeof *lo * (size_t)nvars), *hi = malloc(sizeof *hi * (size_t)nvars);
  int *stamp = malloc(sizeof *stamp * (size_t)nvars);
  if (!lo || !hi || !stamp) bug("out of memory");
  for (int v = 0; v < nvars; v++) lo[v] = -1, hi[v] = -1, stamp[v] = -1;
  for (int i = 0; i < w->nocc; i++) {
    const Occurrence *o = &w->occ[i];
    if (lo[o->var] < 0) lo[o->var] = o->set ? o->pos : o->root;
    hi[o->var] = o->pos;
  }
  for (int l = 0; l < w->nloops; l++) {
    const LoopRange *L = &w->loops[l];
    for (int i = L->occ_first; i < L->occ_end; i++) {
      const Occurrence *o = &w->occ[i];
      if (stamp[o->var] == l) continue;
      stamp[o->var] = l;
      if (o->set && o->parent == L->loop) continue; /* set first in every iteration */
      if (2 * (L->first - 1) < lo[o->var]) lo[o->var] = 2 * (L->first - 1);
      if (2 * L->last + 1 > hi[o->var]) hi[o->var] = 2 * L->last + 1;
    }
  }
  int *events = malloc(sizeof *events * 4 * (size_t)nvars), n = 0;
  if (!events) bug("out of memory");
  for (int v = 0; v < nvars; v++) {
    if (lo[v] < 0) continue; /* no access, or in scratch */
    events[2 * n] = lo[v], events[2 * n + 1] = 0, n++;     /* starts */
    events[2 * n] = hi[v], events[2 * n + 1] = 1, n++;     /* ends, after the starts at the same position */
  }
  qsort(events, (size_t)n, 2 * sizeof *events, by_position);
  int live = 0, most = 0;
  for (int i = 0; i < n; i++) most = max2(most, live += events[2 * i + 1] ? -1 : 1);
  free(events), free(lo), free(hi), free(stamp);
  return most;
}

/* ---- The walk: loops, temporaries and occurrences. */

static int last_read_spilled(const Walk *w) { return __builtin_popcount(w->sp->last_read & w->tracks); }

static int node_temporaries(Walk *w, const IrNode *n) {
  const SpillPlan *sp = w->sp;
  int reads = last_read_spilled(w) ? 2 : 0; /* a counter's raw bits and its last read, loaded */
  switch (n->kind) {
  case IR_OP: {
    int needs[8 * 8], k = 0;
    const IrExpr *seen[8 * 8];
    for (int i = 0; i < n->noperands; i++) {
      const IrOperand *o = &n->operands[i];
      const IrView *v = o->v;
      const IrExpr *xs[8] = {o->slot, o->row, o->col, v ? v->lo[0] : NULL, v ? v->lo[1] : NULL, v ? v->n[0] : NULL,
                             v ? v->n[1] : NULL, v ? v->step[0] : NULL};
      for (int j = 0; j < 8; j++) {
        if (!xs[j] || k == 8 * 8) continue;
        bool again = false;
        for (int m = 0; m < k; m++) again |= ir_expr_equal(seen[m], xs[j]) != 0;
        if (!again) seen[k] = xs[j], needs[k++] = need(xs[j], sp);
      }
    }
    return max2(hold(needs, k), reads);
  }
  case IR_WAIT: {
    int needs[2] = {need(n->threshold, sp), (int)(sp->guards >> n->engine & 1)};
    return max2(hold(needs, 2), reads);
  }
  case IR_SET: return sp->scalar[n->var] ? value_of(need(n->value, sp)) : need_into(n->value, sp);
  case IR_STORE: {
    int needs[2] = {need(n->index, sp), need(n->value, sp)};
    return hold(needs, 2);
  }
  case IR_LOOP: {
    int t = need_into(n->lo, sp);
    if (!holds_bound(n)) {
      int trips[2] = {need(n->lo, sp), need(n->hi, sp)};
      return max2(t, max2(0, value_of(hold(trips, 2)) - 1)); /* the count of iterations left */
    }
    if (sp->bound[n->loop_id]) return max2(t, value_of(need(n->hi, sp))); /* stored; loaded at each test */
    return max2(t, need_into(n->hi, sp));
  }
  case IR_IF: return need(n->cond, sp);
  case IR_BARRIER: return 0;
  }
  return 0;
}

static void walk_nodes(Walk *w, const IrNode *n, const IrNode *parent, int depth, int loop_regs) {
  EngineResources *r = w->r;
  if (depth > r->loop_depth) r->loop_depth = depth;
  if (loop_regs > r->loop_registers) r->loop_registers = loop_regs;
  for (; n; n = n->next) {
    w->pos++;
    if (!parent) w->root = w->pos;
    r->temporaries = max2(r->temporaries, node_temporaries(w, n));
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++) reads_of(w, xs[i], parent);
    int nvars = w->p->ir->streams[w->engine].nvars;
    if (n->kind == IR_SET && !w->sp->scalar[n->var]) add_occurrence(w, n->var, true, parent);
    if (n->kind == IR_WAIT && !(w->sp->guards >> n->engine & 1)) { /* compared, then raised */
      add_occurrence(w, nvars + n->engine, false, parent);
      add_occurrence(w, nvars + n->engine, true, parent);
    }
    if (n->kind == IR_LOOP) {
      int level = holds_bound(n) && !w->sp->bound[n->loop_id] ? 2 : 1;
      int l = w->nloops, first = w->pos + 1, occ_first = w->nocc;
      if (w->nloops == w->loop_cap) {
        w->loop_cap = w->loop_cap ? 2 * w->loop_cap : 16;
        w->loops = realloc(w->loops, sizeof *w->loops * (size_t)w->loop_cap);
        if (!w->loops) bug("out of memory");
      }
      w->nloops++;
      walk_nodes(w, n->body, n, depth + 1, loop_regs + level);
      w->loops[l] = (LoopRange){n, first, w->pos, occ_first, w->nocc};
    }
    if (n->kind == IR_IF) {
      walk_nodes(w, n->body, n, depth, loop_regs);
      walk_nodes(w, n->orelse, n, depth, loop_regs);
    }
  }
}

static int waited_on(const IrStream *s) { return __builtin_popcount(ir_tracks(s)); }

/* The counts for one plan of what is in scratch. */
static EngineResources measure(const Program *p, int engine, const SpillPlan *sp) {
  const IrStream *s = &p->ir->streams[engine];
  EngineResources r = {0};
  Walk w = {.p = p, .sp = sp, .engine = engine, .r = &r, .tracks = ir_tracks(s)};
  walk_nodes(&w, s->body, NULL, 0, 0);
  r.semaphores = waited_on(s);
  r.nscalars = s->nvars;
  r.guards = r.semaphores - __builtin_popcount(sp->guards & w.tracks);
  r.shared = shared_registers(&w, s->nvars + BFRT_MAX_ENGINES);
  r.last_read = p->target->counter_bits < 64 ? r.semaphores - last_read_spilled(&w) : 0;
  r.registers = r.loop_registers + r.shared + r.last_read + r.temporaries;
  r.arrays = s->narrays;
  for (int v = 0; v < s->nvars; v++) r.spilled += sp->scalar[v];
  for (int l = 0; l < p->kernel->nloops; l++) r.spilled += sp->bound[l];
  r.spilled += __builtin_popcount(sp->guards & w.tracks) + last_read_spilled(&w);
  r.plan = *sp;
  free(w.occ);
  free(w.loops);
  return r;
}

/* ---- Choosing what to spill. */

typedef enum { SPILL_SCALAR, SPILL_BOUND, SPILL_GUARD, SPILL_LAST_READ } SpillKind;

typedef struct Candidate {
  SpillKind kind;
  int id;
  double weight; /* scratch operations it would cost, statically, 8 per loop level */
} Candidate;

static double level_weight(int depth) {
  double x = 1;
  for (int i = 0; i < depth && i < 12; i++) x *= 8;
  return x;
}

static void expr_scalar_weights(const IrExpr *x, double wt, double *scalar) {
  if (!x) return;
  if (x->kind == IX_VAR) scalar[x->id] += wt;
  expr_scalar_weights(x->a, wt, scalar);
  expr_scalar_weights(x->b, wt, scalar);
  expr_scalar_weights(x->c, wt, scalar);
}

typedef struct Weights {
  double *scalar, *bound, guard[BFRT_MAX_ENGINES], boundary; /* boundary: ops and wait starts */
} Weights;

static void weigh(const IrNode *n, int depth, Weights *wt) {
  for (; n; n = n->next) {
    double x = level_weight(depth);
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++) expr_scalar_weights(xs[i], x, wt->scalar);
    if (n->kind == IR_SET) wt->scalar[n->var] += x;
    if (n->kind == IR_WAIT) wt->guard[n->engine] += 2 * x, wt->boundary += x;
    if (n->kind == IR_OP) wt->boundary += x;
    if (n->kind == IR_LOOP) {
      wt->bound[n->loop_id] += level_weight(depth + 1) + x;
      weigh(n->body, depth + 1, wt);
    }
    if (n->kind == IR_IF) weigh(n->body, depth, wt), weigh(n->orelse, depth, wt);
  }
}

static double ops_of(const IrNode *n, int depth) {
  double x = 0;
  for (; n; n = n->next) {
    if (n->kind == IR_OP) x += level_weight(depth);
    if (n->kind == IR_LOOP) x += ops_of(n->body, depth + 1);
    if (n->kind == IR_IF) x += ops_of(n->body, depth) + ops_of(n->orelse, depth);
  }
  return x;
}

static int by_weight(const void *a, const void *b) {
  const Candidate *x = a, *y = b;
  if (x->weight != y->weight) return x->weight < y->weight ? -1 : 1;
  return x->kind != y->kind ? (int)x->kind - (int)y->kind : x->id - y->id;
}

static void set_spill(SpillPlan *sp, const Candidate *c, bool on) {
  uint32_t bit = UINT32_C(1) << (c->kind == SPILL_GUARD || c->kind == SPILL_LAST_READ ? c->id : 0);
  switch (c->kind) {
  case SPILL_SCALAR: sp->scalar[c->id] = on; break;
  case SPILL_BOUND: sp->bound[c->id] = on; break;
  case SPILL_GUARD: sp->guards = on ? sp->guards | bit : sp->guards & ~bit; break;
  case SPILL_LAST_READ: sp->last_read = on ? sp->last_read | bit : sp->last_read & ~bit; break;
  }
}

/* The candidates, cheapest first: every scalar, held bound, guard and
 * (with B < 64) last-read count; a last-read count in scratch also costs
 * its producer a load per op (its back-pressure compare). */
static Candidate *candidates(const Program *p, int engine, int *count) {
  const IrStream *s = &p->ir->streams[engine];
  int nloops = p->kernel->nloops;
  Weights wt = {0};
  wt.scalar = calloc((size_t)s->nvars + 1, sizeof *wt.scalar);
  wt.bound = calloc((size_t)nloops + 1, sizeof *wt.bound);
  Candidate *c = calloc((size_t)(s->nvars + nloops + 2 * BFRT_MAX_ENGINES) + 1, sizeof *c);
  if (!wt.scalar || !wt.bound || !c) bug("out of memory");
  weigh(s->body, 0, &wt);
  int n = 0;
  for (int v = 0; v < s->nvars; v++) c[n++] = (Candidate){SPILL_SCALAR, v, wt.scalar[v]};
  for (int l = 0; l < nloops; l++)
    if (wt.bound[l] > 0) c[n++] = (Candidate){SPILL_BOUND, l, wt.bound[l]};
  uint32_t tracks = ir_tracks(s);
  for (int e = 0; e < p->ir->nengines; e++) {
    if (!(tracks >> e & 1)) continue;
    c[n++] = (Candidate){SPILL_GUARD, e, wt.guard[e]};
    if (p->target->counter_bits < 64)
      c[n++] = (Candidate){SPILL_LAST_READ, e, 2 * wt.boundary + ops_of(p->ir->streams[e].body, 0)};
  }
  qsort(c, (size_t)n, sizeof *c, by_weight);
  free(wt.scalar), free(wt.bound);
  *count = n;
  return c;
}

static SpillPlan empty_plan(const Program *p, int engine) {
  SpillPlan sp = {0};
  sp.scalar = ARENA_ARRAY(p->arena, bool, p->ir->streams[engine].nvars + 1);
  sp.bound = ARENA_ARRAY(p->arena, bool, p->kernel->nloops + 1);
  return sp;
}

/* Fits of at most this many values in scratch are trimmed value by value. */
enum { RETURN_MAX = 64 };

EngineResources resources_of(const Program *p, int engine) {
  SpillPlan sp = empty_plan(p, engine);
  EngineResources r = measure(p, engine, &sp);
  int64_t limit = p->target->registers[p->target->engines[engine].kind];
  int n;
  Candidate *c = candidates(p, engine, &n);
  SpillPlan all = empty_plan(p, engine);
  for (int i = 0; i < n; i++) set_spill(&all, &c[i], true);
  int least = measure(p, engine, &all).registers;
  if (limit && r.registers > limit && least <= limit) {
    /* The shortest prefix of the candidates, cheapest first, that fits:
     * found by bisection, since the count only falls as values go to
     * scratch (but for the reload temporaries, which the final measure
     * checks); then, when it is short enough to afford one measure per
     * value, every value the fit does not need back in a register, the
     * dearest first. */
    int fails = 0, fits = n;
    while (fails + 1 < fits) {
      int mid = fails + (fits - fails) / 2;
      SpillPlan tried = empty_plan(p, engine);
      for (int i = 0; i < mid; i++) set_spill(&tried, &c[i], true);
      if (measure(p, engine, &tried).registers <= limit)
        fits = mid;
      else
        fails = mid;
    }
    for (int i = 0; i < fits; i++) set_spill(&sp, &c[i], true);
    for (int i = fits - 1; i >= 0 && fits <= RETURN_MAX; i--) {
      set_spill(&sp, &c[i], false);
      if (measure(p, engine, &sp).registers > limit) set_spill(&sp, &c[i], true);
    }
    r = measure(p, engine, &sp);
    if (r.registers > limit) r = measure(p, engine, &all);
  } else if (limit && r.registers > limit) {
    r = measure(p, engine, &all); /* cannot fit: the least it needs, for the error */
  }
  r.min_registers = least < r.registers ? least : r.registers;
  free(c);
  return r;
}

static void measure_all(const Program *p, EngineResources *out) {
  for (int e = 0; e < p->ir->nengines; e++) out[e] = resources_of(p, e);
  for (int c = 0; c < p->ir->nengines; c++)
    for (int e = 0; e < p->ir->nengines; e++)
      if (e != c && (out[c].plan.last_read & ir_tracks(&p->ir->streams[c])) >> e & 1) out[e].producer_loads++;
  for (int e = 0; e < p->ir->nengines; e++)
    if (out[e].producer_loads && !out[e].temporaries) { /* the loaded count needs a register */
      out[e].temporaries = 1;
      out[e].registers++;
      out[e].min_registers++;
    }
}

const EngineResources *resources_plan(const Program *p) {
  if (!p->ir->resources) {
    EngineResources *all = ARENA_ARRAY(p->arena, EngineResources, p->ir->nengines + 1);
    measure_all(p, all);
    p->ir->resources = all;
  }
  return p->ir->resources;
}

int resources_check(Program *p) {
  const Target *t = p->target;
  int short_of = 0;
  bool limited = false;
  for (int k = 0; k < BFRT_NKINDS; k++) limited |= t->semaphores[k] || t->registers[k];
  if (!limited) return 0;
  const EngineResources *all = resources_plan(p);
  for (int e = 0; e < t->nengines; e++) {
    int kind = t->engines[e].kind;
    int64_t sems = t->semaphores[kind], regs = t->registers[kind];
    EngineResources r = all[e];
    Span none = p->kernel->span;
    if (sems && r.semaphores > sems) {
      diag_error(&p->diag, none,
                 "engine %s waits on %d counters, but the target's %s engines can wait on %lld "
                 "(semaphores)",
                 t->engines[e].name, r.semaphores, t->engines[e].name, (long long)sems);
      short_of++;
    }
    if (regs && r.registers > regs) {
      diag_error(&p->diag, none,
                 "engine %s needs %d registers even with %d values in scratch (%d loop counts and bounds, "
                 "%d scalars and guards, %d last-read counts, %d temporaries), but the target gives it %lld "
                 "(registers)",
                 t->engines[e].name, r.registers, r.spilled, r.loop_registers, r.shared, r.last_read,
                 r.temporaries, (long long)regs);
      short_of++;
    }
  }
  return short_of ? -1 : 0;
}

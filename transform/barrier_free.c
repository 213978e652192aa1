/* barrier_free.c: one instruction stream per engine, with exact counter
 * waits and no barrier (docs/algorithm.md has the argument).
 *
 * For a consumer b on engine c and a producer engine e, the wait before b
 * is `wait S_e >= need_e(b)`, with need_e(b) computed at run time from
 * positions: P_e(p), the number of e-instructions before program point p.
 * Engine c walks the kernel in program order keeping, for every producer
 * it cares about, an IrExpr equal to P_e at the current point:
 *
 *   - an e-instruction adds 1;
 *   - a loop L whose per-iteration count K_e is closed-form and does not
 *     depend on L's variable gives P_e = entry + (i - lo) * K_e inside the
 *     body and entry + trips(lo, hi) * K_e after it, so c may skip L;
 *   - a K_e that depends on i only through conditions on i that are
 *     intervals and residue classes (i < N, i == 0, i % 2 == 0, && || !)
 *     gives entry + S(lo, i), the branches taken in earlier iterations
 *     counted in closed form, and c may skip L all the same;
 *   - otherwise (a triangular nest) c runs L and keeps a running scalar,
 *     set to the entry position before L and to the end-of-body position
 *     after each iteration: the tracked cumulative count.
 *
 * The threshold itself is closed-form when deps.c found the latest
 * conflicting e-instruction a in b's iteration (T = P_e(after a)) or in the
 * last iteration of a loop just before (T = max(before, ran * P_e(after a)
 * at var = hi - 1))). Otherwise it is read from tracking arrays: c stores
 * P_e(after x) into arr[slot] at every e-access x of the resource and kind
 * it depends on (once after a loop, when the slot does not change in it),
 * and loads the slot b touches; an hbm tile's entries are the cells of its
 * tensor's grid that it covers (on a tensor some gather or scatter moves,
 * single-row cells: a transfer's rows, by index or not, are one IX_ROWS
 * set of entries, stored into and loaded as a max at run time). Arrays, running scalars and loops exist
 * only where some wait of c needs them, a wait that what c already knows
 * to be complete implies is not emitted (also through a producer engine
 * that touches two tiles at one slot in step: lockstep). (A device integer used twice in
 * a scope is read once: transform/share_reads.c, after every sync pass.) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/numbers.h"
#include "frontend/program.h"
#include "transform/counting.h"
#include "transform/deps.h"
#include "transform/sync.h"

enum { READS, WRITES };

/* The most tracking-array entries one hbm access stores or loads. */
enum { MAX_ACCESS_CELLS = 16 };

/* How far coverage follows closed-form producers of producers, and how
 * many instructions before a covered one it looks back over. */
enum { MAX_COVER_DEPTH = 8, MAX_COVER_SCAN = 64 };

/* Above this many nodes, a top-level position is stored in a scalar and
 * reused: otherwise each skipped loop adds its count to every later
 * threshold, and the emitted C grows with the square of the kernel. */
enum { MAX_POSITION_SIZE = 40 };

typedef struct NodeList {
  IrNode *head, **tail;
} NodeList;

/* Everything the streams share: the dependence analysis, each consumer's
 * need classification and each loop's per-iteration counts. */
/* A loop's bounds as IR, built once and shared by every stream. */
typedef struct LoopBounds {
  IrExpr *lo, *hi;
  IrExpr *trips; /* trips(lo, hi): never the wrapped max(0, hi - lo) */
  IrExpr *last;  /* hi - 1: the variable in the last iteration */
  IrExpr *ran;   /* 1 if the loop runs at least once, else 0: t - max(0, t - 1) */
} LoopBounds;

/* How an hbm tensor's tracking arrays are indexed: one entry per cell of a
 * grid whose cell is the gcd of the tile shapes that access the tensor (as
 * the oracle cuts it), so regions that overlap share cells and regions that
 * do not share none. cell_rows is 0 for a tensor tracked as a whole (one
 * entry), when some access would cover more than MAX_ACCESS_CELLS cells. */
typedef struct HbmGrid {
  int64_t cell_rows, cell_cols;
  bool ragged; /* some access is a ragged slice: the tensor is tracked as a whole */
  bool strided; /* some access is a slice with steps (or an N-D one across rows): likewise */
  /* some access is a gather or scatter: cells are single rows (cell_rows 1),
   * and an access covering more than MAX_ACCESS_CELLS of them, or a ragged
   * run of rows, is one IX_ROWS set of entries (access_rows) */
  bool gathered;
  IrExpr *ncols;  /* cells per grid row: cols / cell_cols */
  IrExpr *length; /* cells: (rows / cell_rows) * ncols, over parameters */
} HbmGrid;

/* How a tile's tracking arrays are indexed: one entry per slot, or, when
 * some operand views part of it, per cell of a grid over each slot whose
 * cell divides every view's extent and every value its start can take
 * (expr_alignment), so views that meet share cells and views that do not
 * share none, as the oracle cuts it. cells is 1 (per slot) also when some
 * view would cover more than MAX_ACCESS_CELLS cells: coarse. */
typedef struct TileGrid {
  int64_t cell_rows, cell_cols, ncols, cells; /* ncols, cells: of one slot */
  bool coarse;
  bool ragged; /* some view is ragged: tracked over its whole clipped dimension */
  bool strided; /* some view has steps: no rectangle of cells; tracked per slot (coarse) */
} TileGrid;

typedef struct Analysis {
  const Deps *d;
  HbmGrid *grids; /* [tensor] */
  TileGrid *tile_grids; /* [tile] */
  LoopBounds *bounds; /* [loop] */
  /* need_e(b) of every instruction b, stored sparsely: the engines with a
   * need (a bit each) and their Needs in engine order. Most instructions
   * need one or two engines of twenty, so a dense table would be most of
   * the transform's memory. */
  uint32_t *need_mask; /* [instr] */
  Need **needs;        /* [instr]: popcount(need_mask[instr]) of them */
  IrExpr **body_count; /* [loop * nengines + engine]: K_e, NULL when not closed-form or
                          when it depends on the loop's variable */
  CountTerms **branch_terms; /* [loop * nengines + engine]: K_e as terms when it depends
                                       on the loop's variable through analyzable conditions */
  const char **count_note; /* [loop * nengines + engine]: why K_e is (not) closed-form, for
                              --explain, when it depends on the loop's variable or is not */
  IrExpr **conds;      /* [if]: the condition, 0 or 1 */
  /* [loop * nengines + engine]: count_before_iteration's and count_of_loop's
   * results, built once and shared by every stream (IR nodes never change);
   * NULL: not built yet, &running_count: a running count */
  IrExpr **before_iteration, **loop_count;
  struct Constants *constants; /* positions outside loops, shared by every stream */
  /* [instr][access]: an access's IX_ROWS set, built once and shared by every
   * stream and wait, so that equal sets are one node (ir_expr_equal) */
  IrExpr ***rows_sets;
} Analysis;

static IrExpr running_count;

/* Outside loops a followed producer's position is a constant, one more at
 * each of its instructions, in every stream that follows it: each value is
 * built once (open addressing on the value) instead of once per stream. */
typedef struct Constants {
  int64_t n, cap;
  IrExpr **table;
} Constants;

/* The slot of value in k's table: its node, or the empty slot for it. */
static IrExpr **constant_slot(const Constants *k, int64_t value) {
  uint64_t mask = (uint64_t)k->cap - 1;
  for (uint64_t j = (uint64_t)value * 0x9e3779b97f4a7c15u & mask;; j = (j + 1) & mask)
    if (!k->table[j] || k->table[j]->value == value) return &k->table[j];
}

static IrExpr *shared_const(Arena *arena, Constants *k, int64_t value) {
  if (2 * (k->n + 1) > k->cap) { /* twice as large, the same nodes */
    Constants old = *k;
    k->cap = old.cap ? 2 * old.cap : 1024;
    k->table = ARENA_ARRAY(arena, IrExpr *, k->cap);
    for (int64_t i = 0; i < old.cap; i++)
      if (old.table[i]) *constant_slot(k, old.table[i]->value) = old.table[i];
  }
  IrExpr **slot = constant_slot(k, value);
  if (!*slot) {
    k->n++;
    *slot = ir_const(arena, value);
  }
  return *slot;
}

static const Need no_need = {NEED_NONE, -1, -1, NULL, NULL, NULL, -1};

/* need_e(b): NEED_NONE when b does not depend on e. */
static const Need *need_of(const Analysis *an, int b, int e) {
  uint32_t mask = an->need_mask[b];
  if (!(mask >> e & 1)) return &no_need;
  return &an->needs[b][__builtin_popcount(mask & ((1u << e) - 1))];
}

/* The stream of one engine c under construction. */
typedef struct Builder {
  Program *p;
  const Analysis *an;
  int c;
  IrStream *s;
  int *array_of;      /* [(engine * nres + res) * 2 + kind]: array id or -1 */
  int *last_use;      /* [array]: the last instruction id whose wait may load it */
  int *needed_upto;   /* [engine]: last instruction id whose position c needs, -1 if none */
  IrExpr **pos;       /* [engine]: P_e here, NULL when c does not follow e */
  IrExpr **pos_after; /* [instr]: P_e just after it */
  IrExpr **pos_after_if; /* [if * nengines + e]: P_e just after the conditional */
  IrExpr **waited;    /* [engine]: threshold already waited for in this segment */
  int *covered;       /* [engine]: latest instruction of this iteration known complete */
  int loop_depth;     /* source loops around the current point */
  bool *noted;        /* [loop * nengines + engine]: its count explained (note_count) */
} Builder;

static void append(NodeList *l, IrNode *n) {
  *l->tail = n;
  l->tail = &n->next;
}

/* ---- Counts (the closed forms themselves are transform/counting.c's). */

static LoopBounds bounds_of(Program *p, const Stmt *loop) {
  Arena *a = p->arena;
  LoopBounds lb;
  lb.lo = ir_from_expr(p, loop->lo);
  lb.hi = ir_from_expr(p, loop->hi);
  lb.trips = ir_binary(a, IX_TRIPS, lb.lo, lb.hi, 0);
  lb.last = ir_binary(a, IX_SUB, lb.hi, ir_const(a, 1), 0);
  IrExpr *rest = ir_binary(a, IX_MAX, ir_const(a, 0), ir_binary(a, IX_SUB, lb.trips, ir_const(a, 1), 0), 0);
  lb.ran = ir_binary(a, IX_SUB, lb.trips, rest, 0);
  return lb;
}

/* Sort loop L's per-iteration count body (NULL: not closed-form) for e:
 * K_e itself when it does not depend on L's variable, terms when it does
 * through analyzable conditions, else nothing (a running count). */
static void classify_loop_count(Program *p, Analysis *an, const Stmt *loop, int e, IrExpr *body) {
  int at = loop->loop_id * an->d->nengines + e;
  const char *why_not = NULL, *lines = NULL;
  if (!body) {
    an->count_note[at] = "a loop inside it keeps a running count";
  } else if (!total_expr(body)) {
    an->count_note[at] = "its count reads a device integer or divides by a value that may be 0, "
                         "which it may not evaluate where the kernel does not";
  } else if (!uses_loopvar(body, loop->loop_id)) {
    an->body_count[at] = body;
  } else if ((an->branch_terms[at] = count_terms_of(p, an->d, an->conds, loop->loop_id, body, &why_not, &lines))) {
    an->count_note[at] = arena_printf(p->arena, "closed form, the branches taken counted from %s "
                                      "(conditions at %s)", loop->var, lines);
  } else {
    an->count_note[at] = why_not;
  }
}

/* P_e's growth from L's entry to the start of the current iteration, or
 * NULL when L keeps a running count. */
static IrExpr *count_before_iteration(Arena *a, const Analysis *an, int loop, int e) {
  int at = loop * an->d->nengines + e;
  if (!an->before_iteration[at]) {
    IrExpr *i = ir_leaf(a, IX_LOOPVAR, loop), *count = &running_count;
    if (an->body_count[at])
      count = ir_binary(a, IX_MUL, ir_binary(a, IX_SUB, i, an->bounds[loop].lo, 0), an->body_count[at], 0);
    else if (an->branch_terms[at])
      count = count_over(a, an->branch_terms[at], an->bounds[loop].lo, i);
    an->before_iteration[at] = count;
  }
  return an->before_iteration[at] == &running_count ? NULL : an->before_iteration[at];
}

/* count_e(L), or NULL when L keeps a running count. */
static IrExpr *count_of_loop(Arena *a, const Analysis *an, int loop, int e) {
  int at = loop * an->d->nengines + e;
  if (!an->loop_count[at]) {
    IrExpr *count = &running_count;
    if (an->body_count[at])
      count = ir_binary(a, IX_MUL, an->bounds[loop].trips, an->body_count[at], 0);
    else if (an->branch_terms[at])
      count = count_over(a, an->branch_terms[at], an->bounds[loop].lo, an->bounds[loop].hi);
    an->loop_count[at] = count;
  }
  return an->loop_count[at] == &running_count ? NULL : an->loop_count[at];
}

/* count_e(list) as a closed form, or NULL; fills body_count for its loops.
 * The instructions' constant part is summed apart: one IR node per loop,
 * not one per instruction. */
static IrExpr *count_list(Program *p, Analysis *an, const Stmt *s, int e) {
  IrExpr *sum = ir_const(p->arena, 0);
  int64_t direct = 0;
  for (; s; s = s->next) {
    IrExpr *k = NULL;
    switch (s->kind) {
    case ST_INSTR: { /* the run of sibling instructions from s */
      const Deps *d = an->d;
      int id = s->instr_id, end = d->run_end[id];
      for (; id < end; id++) direct += d->engine_of[id] == e;
      s = d->instrs[end - 1].stmt;
      continue;
    }
    case ST_BLOCK: k = count_list(p, an, s->body, e); break;
    case ST_FOR:
      classify_loop_count(p, an, s, e, count_list(p, an, s->body, e));
      k = count_of_loop(p->arena, an, s->loop_id, e);
      break;
    case ST_LET: continue; /* no instructions: a let is a name, its uses are its expression (sema) */
    case ST_IF: {
      /* both branches are walked, so their loops get their counts */
      IrExpr *then = count_list(p, an, s->body, e), *orelse = count_list(p, an, s->orelse, e);
      if (then && orelse) k = ir_select(p->arena, an->conds[s->if_id], then, orelse);
      break;
    }
    }
    sum = sum && k ? ir_binary(p->arena, IX_ADD, sum, k, 0) : NULL;
  }
  return sum ? ir_binary(p->arena, IX_ADD, sum, ir_const(p->arena, direct), 0) : NULL;
}

/* A last-iteration threshold needs the loop's positions in closed form
 * (so the position in the last iteration is a substitution). */
static bool last_iteration_closed(const Analysis *an, const Need *n, int e) {
  for (; n && n->kind == NEED_LAST; n = n->before)
    if (!count_of_loop(an->d->p->arena, an, n->loop, e)) return false;
  return true;
}

/* Whether s (budget permitting) holds an e-instruction. */
static bool holds_engine(const Stmt *s, int e, int *budget) {
  for (; s; s = s->next) {
    if (--*budget < 0) return true;
    if (s->kind == ST_INSTR ? s->engine == e
                            : holds_engine(s->body, e, budget) || (s->kind == ST_IF && holds_engine(s->orelse, e, budget)))
      return true;
  }
  return false;
}

/* Whether every run of list ends its e-instructions with one that certainly
 * conflicts with consumer: the last statement holding any is such an
 * instruction, a block ending so, or a conditional whose branches both do
 * (a loop may run no iteration, so it does not count). */
static bool ends_with_conflict(const Deps *d, const Stmt *list, int e, int consumer, int *budget) {
  const Stmt *last = NULL;
  for (const Stmt *s = list; s; s = s->next)
    if (s->kind == ST_INSTR ? s->engine == e : holds_engine(s, e, budget)) last = s;
  if (!last || *budget < 0) return false;
  switch (last->kind) {
  case ST_INSTR: return deps_must_conflict(d, last->instr_id, consumer);
  case ST_BLOCK: return ends_with_conflict(d, last->body, e, consumer, budget);
  case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
  case ST_IF:
    return ends_with_conflict(d, last->body, e, consumer, budget) &&
           ends_with_conflict(d, last->orelse, e, consumer, budget);
  case ST_FOR: return false;
  }
  return false;
}

/* A closed form names one producer instance; it is the latest conflicting
 * one if it certainly ran, that is, if each branch around it also encloses
 * the consumer. Otherwise, when the outermost conditional S around it that
 * does not enclose the consumer lies in the producer's loop iteration, does
 * not hold the consumer in its other branch, and
 * every run of S ends its e-instructions with a conflicting one, the latest
 * conflicting instance is the last e-instruction S ran: the threshold is
 * the position after S (a select over the branches). Otherwise which
 * instance is latest depends on the branches taken, and tracking records
 * it as it happens. Returns false for tracking. */
static bool close_through_branches(Program *p, const Deps *d, Need *n, int consumer, int e) {
  for (; n && (n->kind == NEED_CLOSED || n->kind == NEED_LAST); n = (Need *)n->before) {
    if (n->before) {
      Need *copy = ARENA_NEW(p->arena, Need);
      *copy = *n->before;
      n->before = copy;
    }
    if (deps_branches_enclose(d, n->producer, consumer)) continue;
    const IfInfo *s = &d->ifs[deps_outermost_branching(d, n->producer, consumer)];
    int budget = 4096;
    bool inside = s->first <= consumer && consumer < s->end; /* a's branch's sibling holds it */
    if (inside || s->loop != d->instrs[n->producer].loop || !s->stmt->orelse ||
        !ends_with_conflict(d, s->stmt->body, e, consumer, &budget) ||
        !ends_with_conflict(d, s->stmt->orelse, e, consumer, &budget))
      return false;
    n->after_if = s->stmt;
    n->dist = n->kind == NEED_CLOSED ? "same iteration, end of a conditional"
                                     : "last iteration of a loop before, end of a conditional";
  }
  return true;
}

static void collect_conds(Program *p, Analysis *an, const Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_IF) {
      an->conds[s->if_id] = ir_from_cond(p, s->cond);
      collect_conds(p, an, s->orelse);
    }
    if (s->kind != ST_INSTR) collect_conds(p, an, s->body);
  }
}

static IrExpr *cells_along(Program *p, const Expr *extent, int64_t cell) {
  Arena *a = p->arena;
  return ir_binary(a, IX_MAX, ir_const(a, 0), ir_binary(a, IX_DIV, ir_from_expr(p, extent), ir_const(a, cell), 0), 0);
}

/* Each tensor's grid: the gcd of its accesses' shapes, unless an access
 * would cover too many cells. */
static void plan_grids(Program *p, Analysis *an) {
  const Deps *d = an->d;
  const Kernel *k = d->k;
  an->grids = ARENA_ARRAY(p->arena, HbmGrid, k->ntensors + 1);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < d->ninstrs; i++)
      for (int j = 0; j < d->instrs[i].naccesses; j++) {
        const Access *x = &d->instrs[i].accesses[j];
        if (x->res < k->ntiles) continue;
        HbmGrid *g = &an->grids[x->res - k->ntiles];
        const Operand *o = x->operand;
        if (pass == 0 && o->gather) g->gathered = true;
        if (pass == 1 && (o->clip[1] || (o->clip[0] && !g->gathered))) g->ragged = true;
        if (o->view && (o->rstep || o->cstep > 1)) g->strided = true;
        if (pass == 0) { /* an element slice also by where it may start; a gather by single rows */
          g->cell_rows = gcd_i64(g->cell_rows, o->gather ? 1 : gcd_i64(x->rows, o->lo[0] ? expr_alignment(o->lo[0], NULL) : 0));
          g->cell_cols = gcd_i64(g->cell_cols, gcd_i64(x->cols, o->lo[1] ? expr_alignment(o->lo[1], NULL) : 0));
        } else if (!g->gathered && g->cell_rows && (x->rows / g->cell_rows) * (x->cols / g->cell_cols) > MAX_ACCESS_CELLS) {
          g->cell_rows = g->cell_cols = 0;
        }
      }
  for (int t = 0; t < k->ntensors; t++) {
    HbmGrid *g = &an->grids[t];
    if (g->ragged || g->strided) g->cell_rows = g->cell_cols = 0;
    if (!g->cell_rows) continue;
    g->ncols = cells_along(p, k->tensors[t].cols, g->cell_cols);
    g->length = ir_binary(p->arena, IX_MUL, cells_along(p, k->tensors[t].rows, g->cell_rows), g->ncols, 0);
  }
}

/* The cells along dimension d that access x stores or loads: its view's,
 * or every cell of a ragged dimension (the view is clipped at run time). */
static int64_t cells_along_view(const Kernel *k, const TileGrid *g, const Access *x, int d) {
  int64_t size = d ? k->tiles[x->res].cols : k->tiles[x->res].rows;
  return (x->operand->clip[d] ? size : d ? x->cols : x->rows) / (d ? g->cell_cols : g->cell_rows);
}

static int64_t view_cells(const Kernel *k, const TileGrid *g, const Access *x) {
  return cells_along_view(k, g, x, 0) * cells_along_view(k, g, x, 1);
}

/* Each tile's grid, from its accesses' views. */
static void plan_tile_grids(Program *p, Analysis *an) {
  const Deps *d = an->d;
  const Kernel *k = d->k;
  an->tile_grids = ARENA_ARRAY(p->arena, TileGrid, k->ntiles + 1);
  for (int i = 0; i < d->ninstrs; i++)
    for (int j = 0; j < d->instrs[i].naccesses; j++) {
      const Access *x = &d->instrs[i].accesses[j];
      if (x->res >= k->ntiles) continue;
      TileGrid *g = &an->tile_grids[x->res];
      const Operand *o = x->operand;
      if (o->clip[0] || o->clip[1]) g->ragged = true;
      if (o->view && (o->rstep || o->cstep > 1)) g->strided = g->coarse = true;
      g->cell_rows = gcd_i64(g->cell_rows, gcd_i64(x->rows, o->lo[0] ? expr_alignment(o->lo[0], NULL) : 0));
      g->cell_cols = gcd_i64(g->cell_cols, gcd_i64(x->cols, o->lo[1] ? expr_alignment(o->lo[1], NULL) : 0));
    }
  for (int t = 0; t < k->ntiles; t++) {
    TileGrid *g = &an->tile_grids[t];
    g->cell_rows = gcd_i64(g->cell_rows, k->tiles[t].rows);
    g->cell_cols = gcd_i64(g->cell_cols, k->tiles[t].cols);
  }
  for (int i = 0; i < d->ninstrs; i++)
    for (int j = 0; j < d->instrs[i].naccesses; j++) {
      const Access *x = &d->instrs[i].accesses[j];
      if (x->res < k->ntiles && view_cells(k, &an->tile_grids[x->res], x) > MAX_ACCESS_CELLS)
        an->tile_grids[x->res].coarse = true;
    }
  for (int t = 0; t < k->ntiles; t++) {
    TileGrid *g = &an->tile_grids[t];
    if (g->coarse) g->cell_rows = k->tiles[t].rows, g->cell_cols = k->tiles[t].cols;
    g->ncols = k->tiles[t].cols / g->cell_cols;
    g->cells = (k->tiles[t].rows / g->cell_rows) * g->ncols;
  }
}

/* need_e(b) for every engine e but b's own, kept for the engines b needs. */
static void classify_needs(Program *p, Analysis *an, int b) {
  const Deps *d = an->d;
  Need all[BFRT_MAX_ENGINES];
  int count = 0;
  for (int e = 0; e < d->nengines; e++) {
    if (e == d->instrs[b].engine) continue;
    Need *n = &all[count];
    *n = deps_need(d, b, e);
    if (n->kind == NEED_NONE) continue;
    if (!last_iteration_closed(an, n, e)) *n = (Need){NEED_TRACK, -1, -1, NULL, "loop-carried (tracked)", NULL, -1};
    else if (!close_through_branches(p, d, n, b, e))
      *n = (Need){NEED_TRACK, -1, -1, NULL, "through a branch (tracked)", NULL, -1};
    if (n->kind == NEED_TRACK) n->known = deps_latest_sure(d, b, e);
    an->need_mask[b] |= 1u << e;
    count++;
  }
  an->needs[b] = ARENA_ARRAY(p->arena, Need, count);
  memcpy(an->needs[b], all, sizeof(Need) * (size_t)count);
}

static Analysis *analyze(Program *p) {
  Analysis *an = ARENA_NEW(p->arena, Analysis);
  const Deps *d = deps_build(p);
  an->d = d;
  plan_grids(p, an);
  plan_tile_grids(p, an);
  an->bounds = ARENA_ARRAY(p->arena, LoopBounds, d->nloops + 1);
  for (int l = 0; l < d->nloops; l++) an->bounds[l] = bounds_of(p, d->loops[l].stmt);
  an->need_mask = ARENA_ARRAY(p->arena, uint32_t, d->ninstrs + 1);
  an->rows_sets = ARENA_ARRAY(p->arena, IrExpr **, d->ninstrs + 1);
  an->needs = ARENA_ARRAY(p->arena, Need *, d->ninstrs + 1);
  an->body_count = ARENA_ARRAY(p->arena, IrExpr *, d->nloops * d->nengines + 1);
  an->branch_terms = ARENA_ARRAY(p->arena, CountTerms *, d->nloops * d->nengines + 1);
  an->before_iteration = ARENA_ARRAY(p->arena, IrExpr *, d->nloops * d->nengines + 1);
  an->loop_count = ARENA_ARRAY(p->arena, IrExpr *, d->nloops * d->nengines + 1);
  an->count_note = ARENA_ARRAY(p->arena, const char *, d->nloops * d->nengines + 1);
  an->conds = ARENA_ARRAY(p->arena, IrExpr *, p->kernel->nifs + 1);
  an->constants = ARENA_NEW(p->arena, Constants);
  collect_conds(p, an, p->kernel->body);
  for (int e = 0; e < d->nengines; e++) count_list(p, an, p->kernel->body, e);
  for (int b = 0; b < d->ninstrs; b++) classify_needs(p, an, b);
  return an;
}

/* ---- What stream c must follow. */

/* The last instruction id of the outermost loop around i (i at top level). */
static int extend_to_outermost(const Deps *d, int i) {
  int l = d->instrs[i].loop;
  if (l < 0) return i;
  while (d->loops[l].parent >= 0) l = d->loops[l].parent;
  return d->loops[l].end - 1;
}

static void need_position(Builder *b, int e, int instr) {
  int upto = extend_to_outermost(b->an->d, instr);
  if (upto > b->needed_upto[e]) b->needed_upto[e] = upto;
}

static int *array_slot(Builder *b, int e, int res, int kind) {
  return &b->array_of[(e * b->an->d->nres + res) * 2 + kind];
}

static bool accesses_as(const Deps *d, int x, int res, int kind) {
  const InstrInfo *in = &d->instrs[x];
  for (int j = 0; j < in->naccesses; j++)
    if (in->accesses[j].res == res && in->accesses[j].write == (kind == WRITES)) return true;
  return false;
}

/* Whether an e-access of res of this kind may conflict with consumer and
 * run before it: earlier in program order, or anywhere in its outermost
 * loop (an earlier iteration). Gives up (yes) after a bounded search. */
static bool can_precede(const Deps *d, int consumer, int e, int res, int kind) {
  const AccessorList *l = deps_accessors(d, res, e);
  int end = extend_to_outermost(d, consumer) + 1, tries = 0;
  for (int i = deps_lower_bound(l, end) - 1; i >= 0; i--) {
    int x = l->ids[i];
    if (++tries > 64) return true;
    if (accesses_as(d, x, res, kind) && deps_may_precede_conflict(d, x, consumer, res)) return true;
  }
  return false;
}

static void register_array(Builder *b, int consumer, int e, int res, int kind) {
  const Deps *d = b->an->d;
  if (!can_precede(d, consumer, e, res, kind)) return;
  const AccessorList *l = deps_accessors(d, res, e);
  int last_use = extend_to_outermost(d, consumer);
  need_position(b, e, l->ids[l->n - 1] < last_use ? l->ids[l->n - 1] : last_use);
  int *slot = array_slot(b, e, res, kind);
  if (*slot >= 0) {
    if (last_use > b->last_use[*slot]) b->last_use[*slot] = last_use;
    return;
  }
  b->last_use[b->s->narrays] = last_use;
  const char *what = res < d->k->ntiles ? d->k->tiles[res].name : d->k->tensors[res - d->k->ntiles].name;
  IrArray *a = &b->s->arrays[b->s->narrays];
  a->name = arena_printf(b->p->arena, "%s_%s_%s", b->p->target->engines[e].name,
                         kind == WRITES ? "writes" : "reads", what);
  const HbmGrid *g = res < d->k->ntiles ? NULL : &b->an->grids[res - d->k->ntiles];
  const TileGrid *tg = res < d->k->ntiles ? &b->an->tile_grids[res] : NULL;
  a->length = g ? (g->cell_rows ? g->length : ir_const(b->p->arena, 1))
                : ir_const(b->p->arena, d->k->tiles[res].slots * tg->cells);
  /* per slot, the index is a slot (checked as one); per cell, its parts are checked (access_indices) */
  a->tile = tg && tg->cells == 1 ? res : -1;
  *slot = b->s->narrays++;
}

/* Decide which arrays c keeps and up to where it follows each producer. */
static void plan_stream(Builder *b) {
  const Deps *d = b->an->d;
  int max_arrays = d->nengines * d->nres * 2;
  b->s->arrays = ARENA_ARRAY(b->p->arena, IrArray, max_arrays + 1);
  b->last_use = ARENA_ARRAY(b->p->arena, int, max_arrays + 1);
  for (int i = 0; i < max_arrays; i++) b->array_of[i] = -1;
  for (int e = 0; e < d->nengines; e++) b->needed_upto[e] = -1;
  for (int i = 0; i < d->ninstrs; i++) {
    const InstrInfo *in = &d->instrs[i];
    if (in->engine != b->c) continue;
    for (int e = 0; e < d->nengines; e++) {
      const Need *n = need_of(b->an, i, e);
      if (e == b->c || n->kind == NEED_NONE) continue;
      if (n->kind != NEED_TRACK) {
        for (const Need *m = n; m && m->kind != NEED_NONE; m = m->before)
          need_position(b, e, m->after_if ? d->ifs[m->after_if->if_id].end - 1 : m->producer);
        continue;
      }
      for (int j = 0; j < in->naccesses; j++) {
        register_array(b, i, e, in->accesses[j].res, WRITES);
        if (in->accesses[j].write) register_array(b, i, e, in->accesses[j].res, READS);
      }
    }
  }
  for (int e = 0; e < d->nengines; e++)
    if (b->needed_upto[e] >= 0) b->pos[e] = ir_const(b->p->arena, 0);
}

/* Stop following producers whose positions c no longer needs from here on. */
static void retire_positions(Builder *b, int first_id) {
  for (int e = 0; e < b->an->d->nengines; e++)
    if (b->needed_upto[e] < first_id) b->pos[e] = NULL;
}

static int new_var(Builder *b, const char *name) { return ir_new_var(b->p->arena, b->s, name); }

/* ---- Building the stream. */

static IrExpr *slot_expr(Program *p, const Operand *o) {
  return o->slot ? ir_from_expr(p, o->slot) : ir_const(p->arena, 0);
}

/* Split e into base + k (base NULL for a constant). */
static IrExpr *split_offset(IrExpr *e, int64_t *k) {
  if (e->kind == IX_CONST) {
    *k = e->value;
    return NULL;
  }
  if (e->kind == IX_ADD && e->b->kind == IX_CONST) {
    *k = e->b->value;
    return e->a;
  }
  *k = 0;
  return e;
}

static bool has_load(const IrExpr *e) {
  return e && (e->kind == IX_LOAD || has_load(e->a) || has_load(e->b) || has_load(e->c));
}

static bool loads_array(const IrExpr *e, int array) {
  return e && ((e->kind == IX_LOAD && e->id == array) || loads_array(e->a, array) || loads_array(e->b, array) ||
               loads_array(e->c, array));
}

/* Whether before >= x whatever the run: x is one of the terms of before's
 * max, or both are positions with the same base and x's offset is no
 * larger. A load is equal to itself only while no store to its array lies
 * between (the caller forgets a threshold at such a store). */
static bool term_implies(const IrExpr *before, IrExpr *x) {
  if (before->kind == IX_MAX && (term_implies(before->a, x) || term_implies(before->b, x))) return true;
  if (ir_expr_equal(before, x)) return true;
  if (has_load(before) || has_load(x)) return false;
  int64_t kb, kx;
  IrExpr *bb = split_offset((IrExpr *)before, &kb), *bx = split_offset(x, &kx);
  return kb >= kx && (bb == bx || (bb && bx && ir_expr_equal(bb, bx)));
}

/* Whether having waited for `before` already guarantees `after` (every
 * term of after's max is implied): a tracked wait repeated before the next
 * instruction (`sub_row y[r % 2] ..; exp y[r % 2] ..` both wait for the
 * readers of y[r % 2]) is dropped like a repeated closed one. */
static bool implies(const IrExpr *before, IrExpr *after) {
  if (!before) return false;
  if (after->kind == IX_MAX) return implies(before, after->a) && implies(before, after->b);
  return term_implies(before, after);
}

/* A store to array a changes the loads of the thresholds that read it. */
static void forget_loads(Builder *b, int array) {
  for (int e = 0; e < b->an->d->nengines; e++)
    if (loads_array(b->waited[e], array)) b->waited[e] = NULL;
}

static WaitWhy *closed_why(Builder *b, int consumer, const Need *n) {
  const Deps *d = b->an->d;
  WaitWhy *w = ARENA_NEW(b->p->arena, WaitWhy);
  w->consumer_line = d->instrs[consumer].line;
  w->producer_lines[0] = d->instrs[n->producer].line;
  w->nproducers = 1;
  w->kind = deps_kind(d, n->producer, consumer);
  w->distance = n->dist;
  return w;
}

static void add_producer_line(WaitWhy *w, int line) {
  for (int i = 0; i < w->nproducers; i++)
    if (w->producer_lines[i] == line) return;
  if (w->nproducers < 4) w->producer_lines[w->nproducers++] = line;
}

/* The arrays of e that consumer's access x loads: writes for a read;
 * writes and reads for a write; only those whose accesses can precede it. */
static int loaded_array(Builder *b, int consumer, int e, const Access *x, int kind) {
  if (kind == READS && !x->write) return -1;
  int a = *array_slot(b, e, x->res, kind);
  return a >= 0 && can_precede(b->an->d, consumer, e, x->res, kind) ? a : -1;
}

static WaitWhy *tracked_why(Builder *b, int consumer, int e, const Need *n) {
  const Deps *d = b->an->d;
  const InstrInfo *in = &d->instrs[consumer];
  WaitWhy *w = ARENA_NEW(b->p->arena, WaitWhy);
  bool raw = false, war = false, waw = false;
  w->consumer_line = in->line;
  w->distance = n->dist;
  int end = extend_to_outermost(d, consumer) + 1;
  for (int j = 0; j < in->naccesses; j++) {
    const Access *x = &in->accesses[j];
    for (int kind = READS; kind <= WRITES; kind++) {
      if (loaded_array(b, consumer, e, x, kind) < 0) continue;
      raw |= !x->write;
      war |= x->write && kind == READS;
      waw |= x->write && kind == WRITES;
      if (x->res >= d->k->ntiles && !b->an->grids[x->res - d->k->ntiles].cell_rows)
        w->fallback = b->an->grids[x->res - d->k->ntiles].strided
                          ? "hbm tensor tracked as a whole: some slice of it has steps, whose rows or columns "
                            "are no rectangle of cells"
                          : "hbm tensor tracked as a whole: its tile shapes differ so much that one access "
                            "would cover more than 16 cells of their gcd";
      if (x->res < d->k->ntiles && b->an->tile_grids[x->res].coarse)
        w->fallback = b->an->tile_grids[x->res].strided
                          ? "tile tracked per slot: one of its views has steps, whose partitions or columns are "
                            "no rectangle of cells"
                          : "tile tracked per slot: one of its views would cover more than 16 cells of the grid "
                            "that its views' extents and starts share";
      if ((x->res < d->k->ntiles && b->an->tile_grids[x->res].ragged) ||
          (x->res >= d->k->ntiles && b->an->grids[x->res - d->k->ntiles].ragged))
        w->fallback = "ragged views or slices (lo : min(lo + C, E)) are tracked over all of their clipped "
                      "dimension, or their tensor as a whole: what they touch is known only at run time";
      const AccessorList *l = deps_accessors(d, x->res, e);
      for (int i = 0; i < l->n && l->ids[i] < end && w->nproducers < 4; i++)
        if (accesses_as(d, l->ids[i], x->res, kind) && deps_may_conflict(d, l->ids[i], consumer, 0))
          add_producer_line(w, d->instrs[l->ids[i]].line);
    }
  }
  w->kind = deps_kind_name(raw, war, waw);
  return w;
}

/* A slot or view start (of tile id, dims 0 .. 2), or an element slice's
 * start (of tensor id, dims 3, 4), checked at run time unless a constant
 * of a tile (sema checked those; a tensor's shape is known only then). */
static IrExpr *checked(Arena *a, int id, int dim, IrExpr *at, int64_t n, int op, int line) {
  return at->kind == IX_CONST && dim < 3 ? at : ir_tile_at(a, id, dim, at, n, op, line);
}

/* The entries of tile access x: its slot, or (a grid of cells per slot)
 * the cells its view covers, row by row, from the checked slot and view
 * start (bfrt_slot, bfrt_view_at: the op's own error, before any array
 * access). */
static int tile_cells(Builder *b, const InstrInfo *in, const Access *x, IrExpr *out[MAX_ACCESS_CELLS]) {
  Arena *a = b->p->arena;
  const TileGrid *g = &b->an->tile_grids[x->res];
  const Operand *o = x->operand;
  int op = in->stmt->op;
  if (g->cells == 1) {
    out[0] = slot_expr(b->p, o);
    return 1;
  }
  IrExpr *slot = checked(a, x->res, 2, slot_expr(b->p, o), 1, op, in->line), *at[2];
  int64_t cell[2] = {g->cell_rows, g->cell_cols};
  for (int dim = 0; dim < 2; dim++) { /* a ragged dimension: all of it, from 0 */
    at[dim] = o->lo[dim] && !o->clip[dim]
                  ? checked(a, x->res, dim, ir_from_expr(b->p, o->lo[dim]), o->ext[dim], op, in->line)
                  : ir_const(a, 0);
    at[dim] = ir_binary(a, IX_DIV, at[dim], ir_const(a, cell[dim]), 0);
  }
  IrExpr *first = ir_binary(a, IX_MUL, slot, ir_const(a, g->cells), 0);
  int n = 0;
  const Kernel *k = b->an->d->k;
  for (int64_t i = 0; i < cells_along_view(k, g, x, 0); i++) {
    IrExpr *row = ir_binary(a, IX_MUL, ir_binary(a, IX_ADD, at[0], ir_const(a, i), 0), ir_const(a, g->ncols), 0);
    for (int64_t j = 0; j < cells_along_view(k, g, x, 1); j++)
      out[n++] = ir_binary(a, IX_ADD, ir_binary(a, IX_ADD, first, row, 0),
                           ir_binary(a, IX_ADD, at[1], ir_const(a, j), 0), 0);
  }
  return n;
}

static bool as_rows(const HbmGrid *g, const Access *x);
static IrExpr *access_rows(Builder *b, const InstrInfo *in, const Access *x);

/* The entries of x's resource's tracking arrays that x touches: a tile's
 * slot or cells (tile_cells); an hbm tile's cells of its tensor's grid, row by row, from the
 * checked row (bfrt_hbm_row: the op's own error, before any array access);
 * entry 0 of a tensor tracked as a whole. Returns how many. */
static int access_indices(Builder *b, const InstrInfo *in, const Access *x, IrExpr *out[MAX_ACCESS_CELLS]) {
  Program *p = b->p;
  Arena *a = p->arena;
  const Kernel *k = b->an->d->k;
  if (x->res < k->ntiles) return tile_cells(b, in, x, out);
  const HbmGrid *g = &b->an->grids[x->res - k->ntiles];
  if (!g->cell_rows) {
    out[0] = ir_const(a, 0);
    return 1;
  }
  if (as_rows(g, x)) {
    out[0] = access_rows(b, in, x);
    return 1;
  }
  int64_t kr = x->rows / g->cell_rows, kc = x->cols / g->cell_cols;
  IrExpr *r0, *c0;
  if (x->operand->view) { /* an element slice: its checked first row and column, in cells */
    const Operand *o = x->operand;
    IrExpr *at[2];
    for (int dim = 0; dim < 2; dim++)
      at[dim] = ir_binary(a, IX_DIV,
                          checked(a, x->res - k->ntiles, 3 + dim, o->lo[dim] ? ir_from_expr(p, o->lo[dim]) : ir_const(a, 0),
                                  o->ext[dim], in->stmt->op, in->line),
                          ir_const(a, dim ? g->cell_cols : g->cell_rows), 0);
    r0 = at[0];
    c0 = at[1];
  } else {
    IrExpr *col = ir_from_expr(p, x->operand->col);
    IrExpr *row = ir_hbm_row(a, x->res - k->ntiles, x->tile, ir_from_expr(p, x->operand->row), col,
                             in->stmt->op, in->line);
    r0 = ir_binary(a, IX_MUL, row, ir_const(a, kr), 0);
    c0 = ir_binary(a, IX_MUL, col, ir_const(a, kc), 0);
  }
  int n = 0;
  for (int64_t i = 0; i < kr; i++) {
    IrExpr *line = ir_binary(a, IX_MUL, ir_binary(a, IX_ADD, r0, ir_const(a, i), 0), g->ncols, 0);
    for (int64_t j = 0; j < kc; j++)
      out[n++] = ir_binary(a, IX_ADD, ir_binary(a, IX_ADD, line, c0, 0), ir_const(a, j), 0);
  }
  return n;
}

/* Whether access x of a gathered tensor's grid is one IX_ROWS set: a
 * gather or scatter, a run of rows clipped at run time, or more than
 * MAX_ACCESS_CELLS cells. */
static bool as_rows(const HbmGrid *g, const Access *x) {
  return g->gathered && g->cell_rows &&
         (x->operand->gather || x->operand->clip[0] || x->rows * (x->cols / g->cell_cols) > MAX_ACCESS_CELLS);
}

/* The entries of access x as one IX_ROWS set (as_rows): its rows (by
 * index, or from its checked first row: a slice's or an hbm tile's), each
 * with its columns' cells from the checked first column. */
static IrExpr *access_rows(Builder *b, const InstrInfo *in, const Access *x) {
  Program *p = b->p;
  Arena *a = p->arena;
  const Kernel *k = b->an->d->k;
  int t = x->res - k->ntiles, id = (int)(in - b->an->d->instrs);
  IrExpr ***sets = &b->an->rows_sets[id];
  if (!*sets) *sets = ARENA_ARRAY(a, IrExpr *, in->naccesses);
  IrExpr **set = &(*sets)[x - in->accesses];
  if (*set) return *set;
  const HbmGrid *g = &b->an->grids[t];
  const Operand *o = x->operand;
  IrRows *rows = ARENA_NEW(a, IrRows);
  *rows = (IrRows){0, 0, in->stmt->op, o->gather ? o->gather->n : x->rows, x->cols / g->cell_cols, g->ncols};
  IrExpr *c0, *first, *second = NULL;
  if (o->gather) {
    rows->gather = o->gather->tensor + 1;
    rows->axis = o->gather->axis;
    first = ir_from_expr(p, o->gather->elem->lhs);
    second = ir_from_expr(p, o->gather->elem->rhs);
  } else if (o->view) {
    first = o->lo[0] ? ir_from_expr(p, o->lo[0]) : ir_const(a, 0);
    if (o->clip[0]) second = ir_clipped_extent(a, ir_from_expr(p, o->clip[0]), first, o->ext[0]);
  } else {
    IrExpr *col = ir_from_expr(p, o->col);
    first = ir_binary(a, IX_MUL, ir_hbm_row(a, t, x->tile, ir_from_expr(p, o->row), col, in->stmt->op, in->line),
                      ir_const(a, x->rows), 0);
  }
  if (o->view)
    c0 = checked(a, t, 4, o->lo[1] ? ir_from_expr(p, o->lo[1]) : ir_const(a, 0), o->ext[1], in->stmt->op, in->line);
  else
    c0 = ir_binary(a, IX_MUL, ir_from_expr(p, o->col), ir_const(a, x->cols), 0);
  c0 = ir_binary(a, IX_DIV, c0, ir_const(a, g->cell_cols), 0);
  return *set = ir_rows(a, t, rows, first, second, c0, in->line);
}

/* Whether t, a max of loads, already loads what `load` does. */
static bool max_has(const IrExpr *t, const IrExpr *load) {
  if (t->kind == IX_MAX) return max_has(t->a, load) || max_has(t->b, load);
  return ir_expr_equal(t, load);
}

/* max over the arrays of e that b's accesses depend on, at b's slots, each
 * load once (an instruction may touch one resource through two operands). */
static IrExpr *tracked_threshold(Builder *b, int consumer, int e) {
  const InstrInfo *in = &b->an->d->instrs[consumer];
  IrExpr *t = NULL;
  for (int j = 0; j < in->naccesses; j++) {
    const Access *x = &in->accesses[j];
    for (int kind = READS; kind <= WRITES; kind++) {
      int a = loaded_array(b, consumer, e, x, kind);
      if (a < 0) continue;
      IrExpr *index[MAX_ACCESS_CELLS];
      for (int n = access_indices(b, in, x, index), i = 0; i < n; i++) {
        IrExpr *load = ir_load(b->p->arena, a, index[i], in->stmt->op, in->line);
        if (t && max_has(t, load)) continue;
        t = t ? ir_binary(b->p->arena, IX_MAX, t, load, 0) : load;
      }
    }
  }
  if (!t) bug("barrier_free: tracked wait at line %d without arrays", in->line);
  return t;
}

/* e with every use of loop variable `loop` replaced by value. */
static IrExpr *substitute(Program *p, IrExpr *e, int loop, IrExpr *value) {
  switch (e->kind) {
  case IX_LOOPVAR: return e->id == loop ? value : e;
  case IX_CONST:
  case IX_PARAM:
  case IX_VAR: return e;
  case IX_LOAD: bug("barrier_free: array load in a position");
  case IX_NOT: return ir_not(p->arena, substitute(p, e->a, loop, value));
  case IX_ELEM:
    return ir_elem(p->arena, e->id, substitute(p, e->a, loop, value), substitute(p, e->b, loop, value),
                   e->line);
  case IX_SELECT:
    return ir_select(p->arena, substitute(p, e->a, loop, value), substitute(p, e->b, loop, value),
                     substitute(p, e->c, loop, value));
  default:
    return ir_binary(p->arena, e->kind, substitute(p, e->a, loop, value),
                     substitute(p, e->b, loop, value), e->line);
  }
}

/* need_e(b) for a closed or last-iteration need: for the latter, the
 * position in the loop's last iteration if it ran (positions only grow, so
 * that is the latest), else what came before: max(before, ran * last). */
static IrExpr *closed_threshold(Builder *b, const Need *n) {
  Program *p = b->p;
  if (n->kind == NEED_NONE) return ir_const(p->arena, 0);
  int ne = b->an->d->nengines, e = b->an->d->instrs[n->producer].engine;
  IrExpr *at = n->after_if ? b->pos_after_if[n->after_if->if_id * ne + e] : b->pos_after[n->producer];
  if (!at) bug("barrier_free: no position for line %d", b->an->d->instrs[n->producer].line);
  if (n->kind == NEED_CLOSED) return at;
  const LoopBounds *lb = &b->an->bounds[n->loop];
  IrExpr *last = ir_binary(p->arena, IX_MUL, substitute(p, at, n->loop, lb->last), lb->ran, 0);
  return ir_binary(p->arena, IX_MAX, closed_threshold(b, n->before), last, 0);
}

/* The producer a of closed need n of this iteration has completed (with
 * every e-instruction before it), so (by induction over program order:
 * every earlier instance started only once its needs had completed) have
 * its closed-form producers, transitively; not when a is the end of a
 * conditional, as a itself may not have run. cover[e] is the latest
 * e-instruction of the current iteration known complete. */
static void add_coverage(const Analysis *an, int *cover, const Need *n, int depth);

/* What a satisfied need shows complete: a closed need's producer; a
 * tracked one's sure instance of this iteration (Need.known), if any. */
static void cover_need(const Analysis *an, int *cover, const Need *n, int depth) {
  if (n->kind == NEED_CLOSED) add_coverage(an, cover, n, depth);
  if (n->kind == NEED_TRACK && n->known >= 0) {
    Need sure = {NEED_CLOSED, n->known, -1, NULL, NULL, NULL, -1};
    add_coverage(an, cover, &sure, depth);
  }
}

static void add_coverage(const Analysis *an, int *cover, const Need *n, int depth) {
  const Deps *d = an->d;
  int a = n->producer, e = d->instrs[a].engine;
  if (a <= cover[e]) return;
  int before = cover[e];
  cover[e] = a;
  if (depth == MAX_COVER_DEPTH || n->after_if) return;
  /* a's completion shows its engine's earlier instances complete too (a
   * counter counts in order): those of this iteration before a, down to
   * what was known, started only once their own closed needs had
   * completed. Only those that surely ran with a: directly in a's loop
   * body, in no branch that does not also hold a. */
  int lo = d->instrs[a].loop >= 0 ? d->loops[d->instrs[a].loop].first : 0, budget = MAX_COVER_SCAN;
  for (int x = a; x > before && x >= lo && budget-- > 0; x--) {
    if (d->instrs[x].engine != e || d->instrs[x].loop != d->instrs[a].loop || !deps_branches_enclose(d, x, a))
      continue;
    for (int f = 0; f < d->nengines; f++)
      if (f != e) cover_need(an, cover, need_of(an, x, f), depth + 1);
  }
}

/* Whether x and y touch the same cells: the same tile slot, or the same
 * hbm rows and columns. */
/* Whether two views or slices step alike (no step: 1): x[:, 0:16:2] and
 * x[:, 0:8] start and extend alike but are not the same cells. */
static bool same_steps(const Operand *x, const Operand *y) {
  return deps_same_expr(x->rstep, y->rstep) && (x->cstep > 1 ? x->cstep : 1) == (y->cstep > 1 ? y->cstep : 1);
}

/* Whether tile operand y's view covers x's: y is the whole slot, or the
 * same view. */
static bool view_covers(const Operand *y, const Operand *x, const Tile *t) {
  if (!y->lo[0] && !y->lo[1] && !y->clip[0] && !y->clip[1] && y->ext[0] == t->rows && y->ext[1] == t->cols)
    return true;
  return x->ext[0] == y->ext[0] && x->ext[1] == y->ext[1] && deps_same_expr(x->lo[0], y->lo[0]) &&
         deps_same_expr(x->lo[1], y->lo[1]) && deps_same_expr(x->clip[0], y->clip[0]) &&
         deps_same_expr(x->clip[1], y->clip[1]) && same_steps(x, y);
}

/* Whether y touches every cell x does (the same slot and a view that covers x's). */
static bool same_cells(const Deps *d, const Access *x, const Access *y) {
  if (x->res != y->res) return false;
  if (x->operand->kind == OPND_TILE)
    return deps_same_expr(x->operand->slot, y->operand->slot) && view_covers(y->operand, x->operand, &d->k->tiles[x->res]);
  const Gather *gx = x->operand->gather, *gy = y->operand->gather;
  if (gx || gy) /* the same index run: the same rows (i32 tensors never change) */
    return gx && gy && gx->tensor == gy->tensor && gx->axis == gy->axis && gx->n == gy->n &&
           deps_same_expr(gx->elem->lhs, gy->elem->lhs) && deps_same_expr(gx->elem->rhs, gy->elem->rhs) &&
           x->cols == y->cols && deps_same_expr(x->operand->lo[1], y->operand->lo[1]);
  return x->rows == y->rows && x->cols == y->cols && x->operand->view == y->operand->view &&
         deps_same_expr(x->operand->row, y->operand->row) && deps_same_expr(x->operand->col, y->operand->col) &&
         deps_same_expr(x->operand->lo[0], y->operand->lo[0]) && deps_same_expr(x->operand->lo[1], y->operand->lo[1]) &&
         deps_same_expr(x->operand->clip[0], y->operand->clip[0]) &&
         deps_same_expr(x->operand->clip[1], y->operand->clip[1]) && same_steps(x->operand, y->operand);
}

/* Whether access o is a whole tile slot (no view). */
static bool whole_slot(const Deps *d, const Access *o) {
  return o->res < d->k->ntiles && o->operand->kind == OPND_TILE && !o->operand->view &&
         view_covers(o->operand, o->operand, &d->k->tiles[o->res]);
}

/* Whether instruction z has a whole-slot access of res at slot `slot`
 * that conflicts with an access of a's of kind `write` (a read of a's
 * conflicts only with a write). */
static bool touches_slot(const Deps *d, int z, int res, const Expr *slot, bool write) {
  const InstrInfo *iz = &d->instrs[z];
  for (int m = 0; m < iz->naccesses; m++) {
    const Access *o = &iz->accesses[m];
    if (o->res == res && whole_slot(d, o) && deps_same_expr(o->operand->slot, slot) && (o->write || write))
      return true;
  }
  return false;
}

/* Whether some loop encloses both x and y. */
static bool shares_loop(const Deps *d, int x, int y) {
  for (int l = d->instrs[x].loop; l >= 0; l = d->loops[l].parent)
    if (deps_encloses(d, l, y)) return true;
  return false;
}

/* Whether e's accesses of x's tile go in lockstep with its accesses of
 * y's (y an access of a, x of consumer, both whole slots at the same slot
 * expression, a and consumer in one iteration): every e-instruction yy
 * that can conflict with x (and can run before consumer) touches, itself or through a later
 * e-instruction z of its loop body that runs whenever it does, y's tile
 * at the same slot expression in a way that conflicts with y. In each
 * iteration the slot is then the same value for both, so the latest
 * e-instance conflicting with x is at or before one conflicting with y;
 * that one ran before a when a is outside yy's loop body, or when yy
 * comes after a in it (then yy's instance before consumer is of an earlier
 * iteration), or z is before a. FlashAttention's act reads s[j % 2] and
 * mn[j % 2] in one instruction: pe's wait for that read of s covers
 * dve's for the read of mn. */
static bool lockstep(const Deps *d, const Access *x, int consumer, int a, const Access *y, int e) {
  if (!whole_slot(d, x) || !whole_slot(d, y) || !deps_same_expr(x->operand->slot, y->operand->slot)) return false;
  const AccessorList *l = deps_accessors(d, x->res, e);
  for (int i = 0; i < l->n; i++) {
    int yy = l->ids[i], loop = d->instrs[yy].loop;
    if (yy > consumer && !shares_loop(d, yy, consumer)) continue; /* no instance of it runs before consumer */
    const InstrInfo *iy = &d->instrs[yy];
    for (int m = 0; m < iy->naccesses; m++) { /* every access of yy that can conflict with x */
      const Access *o = &iy->accesses[m];
      if (o->res != x->res || !(o->write || x->write)) continue;
      if (!whole_slot(d, o)) return false;
      const Expr *slot = o->operand->slot;
      bool inside = loop < 0 || deps_encloses(d, loop, a);
      int end = loop >= 0 ? d->loops[loop].end : d->ninstrs, found = -1;
      for (int z = yy; z < end && z <= yy + MAX_COVER_SCAN && found < 0; z++)
        if (d->instrs[z].engine == e && d->instrs[z].loop == loop && deps_branches_enclose(d, z, yy) &&
            touches_slot(d, z, y->res, slot, y->write))
          found = z;
      if (found < 0 || (inside && yy < a && found >= a)) return false;
    }
  }
  return true;
}

/* Whether need_e(consumer) <= need_e(a), for a before consumer in the same
 * iteration of the same loop: each access of consumer that some access of
 * e can conflict with has one of a on the same cells that conflicts with
 * at least as much of e (a read conflicts with e's writes, a write with
 * its reads too), or one whose tile e touches in lockstep with it
 * (lockstep), and no e-instruction touches those resources between
 * them. Then the latest e-instance that conflicts with consumer conflicts
 * with a, or ran before one that does, and ran before a. */
static bool need_within(const Deps *d, int a, int consumer, int e) {
  const InstrInfo *ic = &d->instrs[consumer], *ia = &d->instrs[a];
  for (int j = 0; j < ic->naccesses; j++) {
    const Access *x = &ic->accesses[j];
    const AccessorList *l = deps_accessors(d, x->res, e);
    if (!l->any_write && !(x->write && l->any_read)) continue; /* e never conflicts with x */
    bool found = false;
    for (int m = 0; m < ia->naccesses && !found; m++)
      found = (same_cells(d, x, &ia->accesses[m]) && (ia->accesses[m].write || !x->write)) ||
              lockstep(d, x, consumer, a, &ia->accesses[m], e);
    int next = deps_lower_bound(l, a + 1);
    if (!found || (next < l->n && l->ids[next] < consumer)) return false;
  }
  return true;
}

/* Whether some instruction a of this iteration, before consumer, had its
 * needs complete before consumer starts and needs at least as much of e
 * (need_within): one of c's own (issued before consumer, so past its
 * waits) or one known complete (cover). This is how a tracked wait is
 * seen implied through another engine: a double-buffered load waits for
 * the store that read its slot two iterations ago, and so does the
 * compute op that waits for the load. */
static bool implied_through(const Builder *b, const int *cover, int consumer, int e) {
  const Deps *d = b->an->d;
  int loop = d->instrs[consumer].loop, lo = loop >= 0 ? d->loops[loop].first : 0;
  for (int a = consumer - 1; a >= lo && a >= consumer - MAX_COVER_SCAN; a--) {
    int f = d->engine_of[a];
    bool done = f == b->c || (f != e && a <= cover[f]);
    if (done && d->instrs[a].loop == loop && deps_branches_enclose(d, a, consumer) && need_within(d, a, consumer, e))
      return true;
  }
  return false;
}

/* Whether consumer's wait on e is implied by what is already known
 * complete and by its closed-form waits on the other engines: some
 * e-instruction x of this iteration is known complete, and nothing that
 * may conflict with consumer runs on e between x and it; or an earlier
 * instruction's need on e covers consumer's (implied_through). */
static bool covered_by_others(Builder *b, int consumer, int e) {
  const Deps *d = b->an->d;
  int cover[BFRT_MAX_ENGINES];
  memcpy(cover, b->covered, sizeof(int) * (size_t)d->nengines);
  for (int f = 0; f < d->nengines; f++)
    if (f != e && f != b->c) cover_need(b->an, cover, need_of(b->an, consumer, f), 0);
  return (cover[e] >= 0 && deps_nothing_between(d, cover[e], consumer, e)) || implied_through(b, cover, consumer, e);
}

static void emit_waits(Builder *b, int consumer, NodeList *out) {
  const Deps *d = b->an->d;
  for (int e = 0; e < d->nengines; e++) {
    const Need *n = need_of(b->an, consumer, e);
    if (e == b->c || n->kind == NEED_NONE) continue;
    IrExpr *t;
    const WaitWhy *why;
    if (covered_by_others(b, consumer, e)) continue;
    t = n->kind != NEED_TRACK ? closed_threshold(b, n) : tracked_threshold(b, consumer, e);
    if (implies(b->waited[e], t)) continue;
    why = n->kind != NEED_TRACK ? closed_why(b, consumer, n) : tracked_why(b, consumer, e, n);
    IrNode *w = ir_node(b->p->arena, IR_WAIT, d->instrs[consumer].line);
    w->engine = e;
    w->threshold = t;
    w->why = why;
    append(out, w);
    b->waited[e] = t;
  }
  for (int e = 0; e < d->nengines; e++)
    if (e != b->c) cover_need(b->an, b->covered, need_of(b->an, consumer, e), 0);
}

/* Whether access j of in stores what an earlier access of it already does:
 * the same resource, kind, slot and view (`add y, x[i], x[i]` reads x[i]
 * twice, `add y, x[:, 0:8], x[:, 8:16]` two parts of x; an instruction has
 * one hbm operand). */
static bool stored_before(Builder *b, const InstrInfo *in, int j) {
  const Access *x = &in->accesses[j];
  if (x->res >= b->an->d->k->ntiles) return false;
  for (int k = 0; k < j; k++) {
    const Operand *o = in->accesses[k].operand;
    if (in->accesses[k].res == x->res && in->accesses[k].write == x->write &&
        ir_expr_equal(slot_expr(b->p, o), slot_expr(b->p, x->operand)) && o->ext[0] == x->operand->ext[0] &&
        o->ext[1] == x->operand->ext[1] && deps_same_expr(o->lo[0], x->operand->lo[0]) &&
        deps_same_expr(o->lo[1], x->operand->lo[1]) && deps_same_expr(o->clip[0], x->operand->clip[0]) &&
        deps_same_expr(o->clip[1], x->operand->clip[1]) && same_steps(o, x->operand))
      return true;
  }
  return false;
}

static void emit_stores(Builder *b, int id, IrExpr *position, NodeList *out) {
  const InstrInfo *in = &b->an->d->instrs[id];
  for (int j = 0; j < in->naccesses; j++) {
    const Access *x = &in->accesses[j];
    int a = *array_slot(b, in->engine, x->res, x->write ? WRITES : READS);
    if (a < 0 || id > b->last_use[a] || stored_before(b, in, j)) continue;
    IrExpr *index[MAX_ACCESS_CELLS];
    for (int n = access_indices(b, in, x, index), i = 0; i < n; i++) {
      IrNode *store = ir_node(b->p->arena, IR_STORE, in->line);
      store->array = a;
      store->op = in->stmt->op;
      store->index = index[i];
      store->value = position;
      append(out, store);
      forget_loads(b, a);
    }
  }
}

static void walk_list(Builder *b, const Stmt *s, NodeList *out);

/* Outside every loop, a position grown past MAX_POSITION_SIZE becomes a
 * scalar set once here: it never changes afterwards, so later thresholds,
 * stores and loop entries may all refer to it (one bookkeeping operation
 * instead of reprinting and re-evaluating the sum at every use). */
static void settle_position(Builder *b, int e, int line, NodeList *out) {
  if (b->loop_depth > 0 || b->pos[e]->size <= MAX_POSITION_SIZE) return;
  Program *p = b->p;
  IrNode *set = ir_node(p->arena, IR_SET, line);
  set->var = new_var(b, arena_printf(p->arena, "%s_pos_line%d", p->target->engines[e].name, line));
  set->value = b->pos[e];
  append(out, set);
  b->pos[e] = ir_leaf(p->arena, IX_VAR, set->var);
}

static void walk_instr(Builder *b, const Stmt *s, NodeList *out) {
  int id = s->instr_id;
  const InstrInfo *in = &b->an->d->instrs[id];
  retire_positions(b, id);
  if (in->engine == b->c) {
    emit_waits(b, id, out);
    append(out, ir_op(b->p, in->stmt, in->line));
    return;
  }
  if (!b->pos[in->engine]) return;
  IrExpr *at = b->pos[in->engine];
  b->pos[in->engine] = at->kind == IX_CONST && at->value < INT64_MAX
                           ? shared_const(b->p->arena, b->an->constants, at->value + 1)
                           : ir_binary(b->p->arena, IX_ADD, at, ir_const(b->p->arena, 1), 0);
  settle_position(b, in->engine, in->line, out);
  emit_stores(b, id, b->pos[in->engine], out);
  b->pos_after[id] = b->pos[in->engine];
}

static void clear_waited(Builder *b) {
  for (int e = 0; e < b->an->d->nengines; e++) b->waited[e] = NULL;
}

/* For --explain: how c counts e through loop, when e's count in it is not
 * simply the same every iteration (running: the running count's name). */
static void note_count(Builder *b, const Stmt *loop, int e, const char *running) {
  Program *p = b->p;
  int at = loop->loop_id * b->an->d->nengines + e;
  const char *why = b->an->count_note[at];
  if (!why || b->noted[at]) return;
  b->noted[at] = true;
  IrStream *s = b->s;
  /* doubling, not a copy per note: a stream may follow 20 engines through
   * hundreds of loops */
  s->notes = arena_grow(p->arena, (void *)s->notes, sizeof *s->notes, s->nnotes, &s->notes_cap);
  s->notes[s->nnotes++] = running ? arena_printf(p->arena, "%s through loop %s (line %d): running count %s: %s",
                                              p->target->engines[e].name, loop->var,
                                              b->an->d->loops[loop->loop_id].line, running, why)
                               : arena_printf(p->arena, "%s through loop %s (line %d): %s",
                                              p->target->engines[e].name, loop->var,
                                              b->an->d->loops[loop->loop_id].line, why);
}

/* Position of each followed producer at the start of an iteration of
 * `loop`; running scalars (set in pre) where the count is not closed-form. */
static void enter_body(Builder *b, const Stmt *loop, IrExpr **entry, int *running, NodeList *pre) {
  Program *p = b->p;
  for (int e = 0; e < b->an->d->nengines; e++) {
    running[e] = -1;
    if (!entry[e]) continue;
    IrExpr *done = count_before_iteration(p->arena, b->an, loop->loop_id, e);
    if (done) {
      b->pos[e] = ir_binary(p->arena, IX_ADD, entry[e], done, 0);
      note_count(b, loop, e, NULL);
      continue;
    }
    running[e] = new_var(b, arena_printf(p->arena, "%s_pos_%s%d", p->target->engines[e].name,
                                         loop->var, loop->loop_id));
    note_count(b, loop, e, b->s->var_names[running[e]]);
    IrNode *set = ir_node(p->arena, IR_SET, source_line(&p->src, loop->span.begin));
    set->var = running[e];
    set->value = entry[e];
    append(pre, set);
    b->pos[e] = ir_leaf(p->arena, IX_VAR, running[e]);
  }
}

/* Carry each running scalar to the next iteration. */
static void close_body(Builder *b, const Stmt *loop, const int *running, NodeList *body) {
  for (int e = 0; e < b->an->d->nengines; e++) {
    if (running[e] < 0) continue;
    IrExpr *var = ir_leaf(b->p->arena, IX_VAR, running[e]);
    if (ir_expr_equal(b->pos[e], var)) continue;
    IrNode *set = ir_node(b->p->arena, IR_SET, source_line(&b->p->src, loop->span.begin));
    set->var = running[e];
    set->value = b->pos[e];
    append(body, set);
  }
}

/* A loop whose body, for c, is only stores at slots that do not change
 * from one iteration to the next: c need not run it. After the loop, slot
 * s holds the position of the last iteration's access if the loop ran (the
 * latest one), else what it held. So c runs the stores in the last
 * iteration only, `for v in max(lo, hi - 1) .. hi`: one iteration, or none
 * when the loop runs none, and then it evaluates no slot, as the program
 * evaluates none (a slot may be out of range or divide by zero then). */
static bool summarize_stores(Builder *b, const Stmt *loop, IrNode *body, NodeList *out) {
  Program *p = b->p;
  for (IrNode *n = body; n; n = n->next)
    if (n->kind != IR_STORE || uses_loopvar(n->index, loop->loop_id) || has_load(n->value)) return false;
  const LoopBounds *lb = &b->an->bounds[loop->loop_id];
  IrNode *last = ir_node(p->arena, IR_LOOP, b->an->d->loops[loop->loop_id].line);
  last->loop_id = loop->loop_id;
  last->lo = ir_binary(p->arena, IX_MAX, lb->lo, lb->last, 0);
  last->hi = lb->hi;
  last->body = body;
  append(out, last);
  return true;
}

static void walk_loop(Builder *b, const Stmt *loop, NodeList *out) {
  Program *p = b->p;
  int ne = b->an->d->nengines;
  IrExpr **entry = ARENA_ARRAY(p->arena, IrExpr *, ne);
  int *running = ARENA_ARRAY(p->arena, int, ne);
  NodeList pre = {NULL, &pre.head}, body = {NULL, &body.head};
  bool any_running = false;

  /* what is known complete before the loop holds in every iteration;
   * what an iteration learns holds only in that iteration */
  int covered[BFRT_MAX_ENGINES];
  memcpy(covered, b->covered, sizeof(int) * (size_t)ne);

  retire_positions(b, b->an->d->loops[loop->loop_id].first);
  memcpy(entry, b->pos, sizeof(IrExpr *) * (size_t)ne);
  enter_body(b, loop, entry, running, &pre);
  clear_waited(b);
  b->loop_depth++;
  walk_list(b, loop->body, &body);
  b->loop_depth--;
  close_body(b, loop, running, &body);
  clear_waited(b);
  memcpy(b->covered, covered, sizeof(int) * (size_t)ne);

  for (int e = 0; e < ne; e++) {
    if (!entry[e] || !b->pos[e]) continue;
    if (running[e] >= 0) {
      b->pos[e] = ir_leaf(p->arena, IX_VAR, running[e]);
      any_running = true;
      continue;
    }
    b->pos[e] = ir_binary(p->arena, IX_ADD, entry[e], count_of_loop(p->arena, b->an, loop->loop_id, e), 0);
    note_count(b, loop, e, NULL);
  }
  if (!body.head && !any_running) return; /* nothing to do in it: skip the loop */
  if (!any_running && summarize_stores(b, loop, body.head, out)) return;
  if (pre.head) {
    *out->tail = pre.head;
    out->tail = pre.tail;
  }
  IrNode *n = ir_node(p->arena, IR_LOOP, b->an->d->loops[loop->loop_id].line);
  n->loop_id = loop->loop_id;
  n->lo = b->an->bounds[loop->loop_id].lo;
  n->hi = b->an->bounds[loop->loop_id].hi;
  n->body = body.head;
  append(out, n);
}

/* What was waited for before a conditional still holds after it, but a
 * load's value does not where either branch may have stored to its array. */
static void forget_stored(Builder *b, const IrNode *n) {
  for (; n; n = n->next) {
    if (n->kind == IR_STORE) forget_loads(b, n->array);
    forget_stored(b, n->body);
    forget_stored(b, n->orelse);
  }
}

/* Both branches walked from the same state; after the conditional each
 * followed position is the taken branch's: cond ? then : else (the
 * condition is engine-uniform and its operands do not change inside it).
 * What a branch learns (waits, coverage) holds only inside it. */
static void walk_if(Builder *b, const Stmt *st, NodeList *out) {
  Program *p = b->p;
  int ne = b->an->d->nengines;
  size_t bytes = sizeof(IrExpr *) * (size_t)ne;
  IrExpr **entry = ARENA_ARRAY(p->arena, IrExpr *, ne), **waited = ARENA_ARRAY(p->arena, IrExpr *, ne);
  IrExpr **then_pos = ARENA_ARRAY(p->arena, IrExpr *, ne);
  int covered[BFRT_MAX_ENGINES];
  memcpy(covered, b->covered, sizeof(int) * (size_t)ne);
  memcpy(entry, b->pos, bytes);
  memcpy(waited, b->waited, bytes);
  NodeList then = {NULL, &then.head}, orelse = {NULL, &orelse.head};
  walk_list(b, st->body, &then);
  memcpy(then_pos, b->pos, bytes);
  memcpy(b->pos, entry, bytes);
  memcpy(b->waited, waited, bytes);
  memcpy(b->covered, covered, sizeof(int) * (size_t)ne);
  walk_list(b, st->orelse, &orelse);
  memcpy(b->waited, waited, bytes);
  forget_stored(b, then.head);
  forget_stored(b, orelse.head);
  memcpy(b->covered, covered, sizeof(int) * (size_t)ne);
  IrExpr *cond = b->an->conds[st->if_id];
  for (int e = 0; e < ne; e++) {
    b->pos[e] = then_pos[e] && b->pos[e] ? ir_select(p->arena, cond, then_pos[e], b->pos[e]) : NULL;
    b->pos_after_if[st->if_id * ne + e] = b->pos[e];
  }
  if (!then.head && !orelse.head) return;
  IrNode *n = ir_node(p->arena, IR_IF, source_line(&p->src, st->span.begin));
  n->cond = cond;
  n->body = then.head;
  n->orelse = orelse.head;
  append(out, n);
}

/* A run of sibling instructions from first: the stream's own and those of
 * producers it still follows; the others leave the stream unchanged, but
 * for the positions retired on the way. Returns the run's last. */
static const Stmt *walk_run(Builder *b, const Stmt *first, NodeList *out) {
  const Deps *d = b->an->d;
  int end = d->run_end[first->instr_id];
  for (int id = first->instr_id; id < end; id++) {
    int e = d->engine_of[id];
    if (e == b->c || (b->pos[e] && b->needed_upto[e] >= id)) walk_instr(b, d->instrs[id].stmt, out);
  }
  retire_positions(b, end - 1);
  return d->instrs[end - 1].stmt;
}

static void walk_list(Builder *b, const Stmt *s, NodeList *out) {
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR: s = walk_run(b, s, out); break;
    case ST_FOR:
      walk_loop(b, s, out);
      for (int e = 0; e < b->an->d->nengines; e++)
        if (b->pos[e]) settle_position(b, e, b->an->d->loops[s->loop_id].line, out);
      break;
    case ST_BLOCK: walk_list(b, s->body, out); break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF: walk_if(b, s, out); break;
    }
  }
}

static void build_stream(Program *p, const Analysis *an, int c) {
  const Deps *d = an->d;
  Builder b = {0};
  b.p = p;
  b.an = an;
  b.c = c;
  b.s = &p->ir->streams[c];
  b.array_of = ARENA_ARRAY(p->arena, int, d->nengines * d->nres * 2 + 1);
  b.needed_upto = ARENA_ARRAY(p->arena, int, d->nengines);
  b.pos = ARENA_ARRAY(p->arena, IrExpr *, d->nengines);
  /* one per instruction and stream: freed with the stream's walk */
  b.pos_after = calloc((size_t)d->ninstrs + 1, sizeof *b.pos_after);
  if (!b.pos_after) bug("out of memory (positions of %d instructions)", d->ninstrs);
  b.pos_after_if = ARENA_ARRAY(p->arena, IrExpr *, p->kernel->nifs * d->nengines + 1);
  b.waited = ARENA_ARRAY(p->arena, IrExpr *, d->nengines);
  b.covered = ARENA_ARRAY(p->arena, int, d->nengines);
  b.noted = ARENA_ARRAY(p->arena, bool, d->nloops * d->nengines + 1);
  for (int e = 0; e < d->nengines; e++) b.covered[e] = -1;
  plan_stream(&b);
  NodeList out = {NULL, &out.head};
  walk_list(&b, p->kernel->body, &out);
  b.s->body = out.head;
  free(b.pos_after);
}

/* Requires: a checked kernel. Ensures: p->ir, one stream per engine, every
 * threshold equal to need_e(b) at run time, no barrier. */
void transform_barrier_free(Program *p) {
  const Analysis *an = analyze(p);
  p->ir = ARENA_NEW(p->arena, IrProgram);
  p->ir->sync = SYNC_BARRIER_FREE;
  p->ir->nengines = p->target->nengines;
  for (int c = 0; c < p->ir->nengines; c++) build_stream(p, an, c);
}

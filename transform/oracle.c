/* oracle.c: the exactness oracle (see oracle.h for the contract).
 *
 * Two independent computations meet here. The sequential walk runs the
 * kernel as written, one instruction at a time in program order, and keeps
 * per memory cell and engine the last write and the last read positions; a
 * new instance's need on engine e is the latest e-position among the cells
 * it touches that conflict with it. Tiles are tracked per slot, or, when
 * some operand views part of a tile, per cell of a grid over each slot
 * whose cell divides every view's extent and every value its start takes
 * (its alignment with these parameters); an hbm tensor is cut into a grid
 * whose cell is the gcd of every access shape used on it. Either way
 * overlapping regions share cells exactly and nothing is conservative.
 *
 * The abstract execution then interprets the transform's IR, one engine per
 * interpreter, under a seeded random scheduler. Safety is judged by
 * happens-before, not by the interleaving: each engine carries a vector
 * clock over stream positions; completing the k-th op stores a snapshot;
 * an executed wait S_e >= T joins e's snapshot at its T-th position (in
 * barrier mode counters restart at each barrier, so T is shifted by e's
 * position at the last barrier); a barrier joins all clocks. An instruction
 * is safe when its engine's clock covers its needs. The interleaving still
 * matters for what the schedule can show: deadlocks, and that the k-th op
 * of each stream is the k-th instance of the walk.
 *
 * Memory follows the kernel's live state, not its instruction count. The
 * walk is a resumable cursor (Walk) that the abstract execution pulls as
 * far as its engine furthest ahead; instances wait in per-engine queues
 * only while the schedule lets their engine lag. oracle_new walks once to
 * report the kernel's own run-time errors and count the instances; each
 * schedule and each ideal makespan walks again. A snapshot is kept only
 * after an op whose clock changed (History), and only while some wait can
 * still look it up: a wait's lookups lie above the clock its group of
 * waits started from, and an engine already waiting on e gets e's clock
 * handed over as e passes the threshold (capture_for_waiters), so the
 * history reaches back only as far as the engines watching e lag behind
 * it. A race's report finds the instance it names by a walk of its own.
 *
 * The ideal makespan reuses the walk: list scheduling of the same streams
 * with the exact needs as the only edges, under the simulator's timing
 * (runtime/sim.c): an instance starts when its engine can issue
 * (occupancy), its needs on other engines are stamped, its latest
 * conflicting instance on its own engine is stamped and, on a pipelined
 * dma engine, the instance dma_outstanding back is stamped; a stamp is
 * max(the previous stamp, start + completion). The cells keep each
 * access's stamp beside its position (an engine's stamps grow with its
 * positions), so the schedule needs no per-instance array either. With
 * sync costs, the walk also keeps what each engine knows complete by
 * happens-before if it waits for exactly its needs, a vector clock per
 * engine whose past values live in the same History as the abstract
 * execution's: an instance whose needs that clock does not cover must
 * wait under every exact scheme, and pays for it (ideal_makespan). */
#include "transform/oracle.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/random.h"
#include "util/numbers.h"

/* ---- The sequential walk. */

/* A device integer one engine has read: each engine reads each once. */
typedef struct ReadKey {
  int64_t row, col;
  int tensor, engine; /* engine -1: an empty slot */
} ReadKey;

/* What a walk does with each instance it reaches. */
typedef enum WalkMode {
  WALK_COUNT, /* count them (and find the kernel's run-time errors) */
  WALK_NEEDS, /* find their needs and queue them for the abstract execution */
  WALK_IDEAL, /* list-schedule them for the ideal makespan */
} WalkMode;

/* A body being walked: its next statement, and the loop it is the body of. */
typedef struct WalkFrame {
  const Stmt *next, *loop;
  int64_t hi;
} WalkFrame;

/* One engine's instances walked and not yet run by the abstract execution:
 * a ring, as long as the schedule lets that engine lag behind the walk. */
typedef struct Queue {
  int64_t head, len, cap;
  const Stmt **instr;
  uint64_t *where;   /* a hash of its operands' evaluated indices */
  int64_t *need;     /* need[slot * nengines + e] */
} Queue;

/* An engine's vector clock over stream positions after its instances,
 * kept only at the instances where it changed and only while a lookup can
 * still find it (history_compact). The abstract execution looks up what a
 * producer knew at the instance a wait reached, the ideal what it knew at
 * the instance an instruction needs; neither keeps a clock per instance. */
typedef struct History {
  int64_t len, cap, kept; /* kept: the length after the last compaction */
  int64_t *at;            /* at[i]: the instance after which clock i holds, increasing */
  int64_t *clock;         /* clock[i * n + f] */
  bool *mark;             /* the clocks history_compact keeps */
} History;

/* The list schedule of the ideal makespan, fed one instance at a time. */
typedef struct Ideal {
  const bfrt_costs *costs;
  bool charge_sync;
  int64_t window[BFRT_MAX_ENGINES];  /* instances in flight (bfrt_op_window) */
  int64_t free_at[BFRT_MAX_ENGINES]; /* when the engine can issue again */
  int64_t done[BFRT_MAX_ENGINES];    /* the stamp of its latest instance */
  int64_t *recent[BFRT_MAX_ENGINES]; /* recent[e][pos % window]: the stamps of its last window instances */
  int64_t makespan, dma_work;
  /* Device reads (charge_sync): the set of (engine, element) read so far,
   * the reads not yet charged before an instance, and the idle cycles not
   * yet spent on them. */
  ReadKey *read_set;
  int64_t nread, read_cap;
  int64_t pending_reads[BFRT_MAX_ENGINES], idle[BFRT_MAX_ENGINES];
  /* The must-wait test (charge_sync): known[c][e], the instances of e
   * that c knows complete by happens-before, and each engine's history. */
  int64_t known[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES];
  History history[BFRT_MAX_ENGINES];
} Ideal;

/* A walk in progress: the kernel in program order, one instance at a time. */
typedef struct Walk {
  WalkMode mode;
  WalkFrame *frames;
  int depth;
  int64_t *loopvars;
  int64_t count[BFRT_MAX_ENGINES]; /* instances so far, by engine */
  const Stmt *last;                /* the latest instance's statement */
  int only;                        /* WALK_NEEDS: the engine whose instances are queued; -1: all */
  int64_t steps;                   /* instructions and loop iterations walked, against p->max_steps */
  Queue queue[BFRT_MAX_ENGINES];   /* WALK_NEEDS */
  Ideal *ideal;                    /* WALK_IDEAL */
} Walk;

/* An hbm tensor's conflict cells with these parameters. */
typedef struct Grid {
  int64_t rows, cols;           /* the tensor's shape */
  int64_t cell_rows, cell_cols; /* gcd of the access shapes; 0 when never accessed */
  int64_t ncols;                /* cells per grid row */
  int64_t base;                 /* its first cell */
} Grid;

/* A rectangle of cells an operand touches (a tile slot is a 1 x 1 one). */
typedef struct Region {
  int64_t base, r0, r1, c0, c1, ncols;
  bool reads, writes;
  int64_t at[2]; /* as evaluated: the slot (and 0), or the hbm row and column */
  int64_t n[2];  /* a view's or slice's extents as run (a ragged one's clipped) */
  int64_t rs, cs; /* cells between a strided slice's rows and columns (0: 1; the cells are then single elements) */
  const int64_t *rows; /* a gather's or scatter's: the grid row of each of its r1 - r0 rows (r0 = 0), else NULL */
} Region;

struct Oracle {
  Program *p;
  int64_t *gather_rows, ngather_rows; /* the rows of the instance's gather or scatter: room for the longest */
  const int64_t *params;
  int nengines;
  int max_depth;      /* deepest nesting of bodies, plus 1 */
  int64_t total[BFRT_MAX_ENGINES]; /* instances of each engine in the whole walk */
  int64_t *tile_base; /* first cell of each tile */
  Grid *tile_grid;    /* per tile: the cells of one slot (1 x 1 unless some operand views part of it) */
  Grid *grid;         /* per tensor */
  int64_t ncells;
  /* The walk's summary of the past, per cell and engine ([cell * nengines
   * + engine]): the positions of the latest write and read, and (WALK_IDEAL)
   * their stamps. This, not the instruction count, is what the walk keeps. */
  int64_t *last_write, *last_read, *write_done, *read_done;
  /* The engines with an instruction in each loop and conditional: they
   * read its bounds or condition (the ideal charges device reads). */
  uint32_t *loop_engines, *if_engines;
  Walk first; /* oracle_new's, which counts */
  bool failed;
};

/* Cells beyond this make the grid too large to track exactly (each costs
 * two positions per engine). */
#define MAX_CELLS ((int64_t)1 << 22)

static void *grow(Arena *arena, void *old, int64_t len, int64_t newcap, size_t elem) {
  void *fresh = arena_alloc(arena, (size_t)newcap * elem);
  if (old) memcpy(fresh, old, (size_t)len * elem);
  return fresh;
}

/* The queues and the ideal's rings live only as long as their walk. */
static void *resize(void *old, int64_t n, size_t elem) {
  void *fresh = realloc(old, (size_t)(n ? n : 1) * elem);
  if (!fresh) bug("out of memory (%lld x %zu bytes)", (long long)n, elem);
  return fresh;
}

/* ---- Clock histories. */

/* Whether other raised any of clock's entries. */
static bool join(int64_t *clock, const int64_t *other, int n) {
  bool raised = false;
  for (int e = 0; e < n; e++)
    if (other[e] > clock[e]) {
      clock[e] = other[e];
      raised = true;
    }
  return raised;
}

/* The clock a lookup at t finds: the last kept at or before t; -1: none. */
static int64_t history_find(const History *h, int64_t t) {
  int64_t lo = 0, hi = h->len;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (h->at[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

/* The clock engine e had after its instance t (t at most its position). */
static void history_clock(const History *h, int n, int e, int64_t t, int64_t *out) {
  int64_t i = history_find(h, t);
  if (i < 0)
    memset(out, 0, sizeof(int64_t) * (size_t)n);
  else
    memcpy(out, h->clock + i * n, sizeof(int64_t) * (size_t)n);
  out[e] = t;
}

/* Keep clock as the one after instance at (past every kept one). Returns
 * whether it is time to compact: the history doubled since the last
 * compaction and holds at least `least` clocks. */
static bool history_push(History *h, int n, int64_t at, const int64_t *clock, int64_t least) {
  if (h->len == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 64;
    h->at = resize(h->at, h->cap, sizeof *h->at);
    h->clock = resize(h->clock, h->cap * n, sizeof *h->clock);
    h->mark = resize(h->mark, h->cap, sizeof *h->mark);
  }
  h->at[h->len] = at;
  memcpy(h->clock + h->len * n, clock, sizeof(int64_t) * (size_t)n);
  h->mark[h->len++] = false;
  return h->len >= 2 * h->kept && h->len >= least;
}

/* A lookup at t may come: keep what it finds. */
static void history_mark(History *h, int64_t t) {
  int64_t i = history_find(h, t);
  if (i >= 0) h->mark[i] = true;
}

/* Drop the clocks no marked lookup finds. The last stays: every lookup
 * above it finds it. A kept clock is still the last at or before each
 * lookup that found it, so lookups find the same clocks as before. */
static void history_compact(History *h, int n) {
  int64_t kept = 0;
  if (h->len) h->mark[h->len - 1] = true;
  for (int64_t i = 0; i < h->len; i++) {
    if (!h->mark[i]) continue;
    h->at[kept] = h->at[i];
    memmove(h->clock + kept * n, h->clock + i * n, sizeof(int64_t) * (size_t)n);
    h->mark[kept++] = false;
  }
  h->len = h->kept = kept;
}

static void history_free(History *h) {
  free(h->at);
  free(h->clock);
  free(h->mark);
}

static EvalEnv env_of(const Oracle *o, const Walk *w) {
  return (EvalEnv){o->params, w->loopvars, o->p->device_ints, o->p->device_shape, {0, 0}};
}

/* The error of a failed evaluation (status from expr_eval_in), at span. */
static bool eval_failed(Oracle *o, int status, const EvalEnv *env, const Expr *bad, Span span) {
  if (status == EVAL_OUT_OF_RANGE)
    diag_error(&o->p->diag, bad->span, "element %s[%lld, %lld] is out of bounds (%s is %lld x %lld)",
               bad->name, (long long)env->bad_at[0], (long long)env->bad_at[1], bad->name,
               (long long)env->shape[bad->index][0], (long long)env->shape[bad->index][1]);
  else
    diag_error(&o->p->diag, bad ? bad->span : span, "division by zero with these parameters");
  o->failed = true;
  return false;
}

static bool eval(Oracle *o, const Walk *w, const Expr *e, int64_t *out) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(o, w);
  int status = expr_eval_in(e, &env, out, &bad);
  return status == 0 || eval_failed(o, status, &env, bad, e->span);
}

static bool eval_cond(Oracle *o, const Walk *w, const Cond *c, bool *out) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(o, w);
  int status = cond_eval(c, &env, out, &bad);
  return status == 0 || eval_failed(o, status, &env, bad, c->span);
}

/* The tile operand an hbm operand is moved to or from: its shape (its
 * view's extents) is the region's. */
static const Operand *partner_tile(const Stmt *s, int hbm) {
  for (int i = 0; i < s->noperands; i++)
    if (i != hbm && s->operands[i].kind == OPND_TILE) return &s->operands[i];
  bug("oracle: hbm operand of line %u has no tile partner", s->span.begin);
}

/* What every start and end of operand op's view or slice along dimension
 * d is a multiple of (0: none but 0): its start's alignment, and a ragged
 * end's (lo + n is lo + ext, the clip bound E, or lo). */
static int64_t start_alignment(const Oracle *o, const Operand *op, int d) {
  int64_t a = op->lo[d] ? expr_alignment(op->lo[d], o->params) : 0;
  return op->clip[d] ? gcd_i64(a, expr_alignment(op->clip[d], o->params)) : a;
}

/* A view's or slice's start along d and its extent (a ragged one's clipped). */
static bool view_extent(Oracle *o, const Walk *w, const Operand *op, int d, int64_t *lo, int64_t *n) {
  int64_t end;
  *lo = 0;
  *n = op->ext[d];
  if (op->lo[d] && !eval(o, w, op->lo[d], lo)) return false;
  if (!op->clip[d]) return true;
  if (!eval(o, w, op->clip[d], &end)) return false;
  int64_t left = (int64_t)((uint64_t)end - (uint64_t)*lo);
  *n = left < 0 ? 0 : left < *n ? left : *n;
  return true;
}

static void size_grids(Oracle *o) {
  const Kernel *k = o->p->kernel;
  for (int t = 0; t < k->ntiles; t++) o->tile_grid[t] = (Grid){k->tiles[t].rows, k->tiles[t].cols, 0, 0, 0, 0};
  for (int i = 0; i < k->ninstrs; i++) {
    const Stmt *s = k->instrs[i];
    for (int j = 0; j < s->noperands; j++) {
      const Operand *op = &s->operands[j];
      if (op->kind == OPND_IMM) continue;
      const Operand *t = op->kind == OPND_TILE || op->view ? op : partner_tile(s, j);
      Grid *g = op->kind == OPND_TILE ? &o->tile_grid[op->decl] : &o->grid[op->decl];
      g->cell_rows = gcd_i64(g->cell_rows, op->gather ? 1 : gcd_i64(t->ext[0], start_alignment(o, op, 0)));
      if (op->gather && op->gather->n > o->ngather_rows) o->ngather_rows = op->gather->n;
      g->cell_cols = gcd_i64(g->cell_cols, gcd_i64(t->ext[1], start_alignment(o, op, 1)));
      /* a view or slice with steps touches single rows (columns): cells of one */
      if (op->kind != OPND_IMM && op->view && op->rstep) g->cell_rows = 1;
      if (op->kind != OPND_IMM && op->view && op->cstep > 1) g->cell_cols = 1;
    }
  }
  o->gather_rows = ARENA_ARRAY(o->p->arena, int64_t, o->ngather_rows + 1);
  for (int t = 0; t < k->ntiles; t++) {
    Grid *g = &o->tile_grid[t];
    g->cell_rows = gcd_i64(g->cell_rows, g->rows);
    g->cell_cols = gcd_i64(g->cell_cols, g->cols);
    g->ncols = g->cols / g->cell_cols;
  }
}

/* Requires: grids sized. Ensures: every tile slot and tensor cell numbered. */
static void number_cells(Oracle *o) {
  const Kernel *k = o->p->kernel;
  for (int t = 0; t < k->ntiles; t++) {
    const Grid *g = &o->tile_grid[t];
    int64_t cells = (g->rows / g->cell_rows) * g->ncols; /* of one slot */
    o->tile_base[t] = o->ncells;
    if (k->tiles[t].slots > (MAX_CELLS - o->ncells) / cells) {
      diag_error(&o->p->diag, k->tiles[t].span,
                 "tile '%s' is too large for the oracle to track: its %lld slots of %lld cells take it past %lld "
                 "tile and tensor cells in all",
                 k->tiles[t].name, (long long)k->tiles[t].slots, (long long)cells, (long long)MAX_CELLS);
      o->failed = true;
      return;
    }
    o->ncells += k->tiles[t].slots * cells;
  }
  for (int t = 0; t < k->ntensors && !o->failed; t++) {
    Grid *g = &o->grid[t];
    const Tensor *x = &k->tensors[t];
    if (!eval(o, &o->first, x->rows, &g->rows) || !eval(o, &o->first, x->cols, &g->cols)) return;
    if (g->rows < 0 || g->cols < 0) {
      diag_error(&o->p->diag, x->span, "tensor '%s' has shape [%lld, %lld] with these parameters",
                 x->name, (long long)g->rows, (long long)g->cols);
      o->failed = true;
      return;
    }
    if (!g->cell_rows) continue;
    int64_t grid_rows = (g->rows + g->cell_rows - 1) / g->cell_rows;
    g->ncols = (g->cols + g->cell_cols - 1) / g->cell_cols;
    g->base = o->ncells;
    if (g->ncols && grid_rows > (MAX_CELLS - o->ncells) / g->ncols) {
      diag_error(&o->p->diag, x->span,
                 "tensor '%s' is too large for the oracle to track: its %lld x %lld tiles take it past %lld tile "
                 "slots and tensor tiles in all", x->name, (long long)grid_rows, (long long)g->ncols, (long long)MAX_CELLS);
      o->failed = true;
      return;
    }
    o->ncells += grid_rows * g->ncols;
  }
}

/* An element slice X[r0:r1, c0:c1], in the runtime's words when outside. */
static bool slice_region(Oracle *o, const Walk *w, const Stmt *s, const Operand *op, Region *rg) {
  const Grid *g = &o->grid[op->decl];
  int64_t lo[2] = {0, 0}, n[2], size[2] = {g->rows, g->cols}, step[2] = {1, op->cstep > 1 ? op->cstep : 1}, span[2];
  const char *verb = s->op == BFRT_STORE ? "store to" : s->op == BFRT_LOAD ? "load from" : s->op_name;
  if (op->rstep && !eval(o, w, op->rstep, &step[0])) return false;
  for (int d = 0; d < 2; d++) {
    if (!view_extent(o, w, op, d, &lo[d], &n[d])) return false;
    span[d] = 0; /* (n - 1) * step + 1: the rows or columns its indices reach */
    if (n[d] > 0 && (step[d] < 1 || __builtin_mul_overflow(n[d] - 1, step[d], &span[d]) || span[d] == INT64_MAX)) {
      diag_error(&o->p->diag, op->span, "%s %s: a slice of %lld indices %lld apart does not fit a tensor", verb,
                 op->name, (long long)n[d], (long long)step[d]);
      o->failed = true;
      return false;
    }
    if (n[d] > 0) span[d]++;
    if (span[d] > size[d] || lo[d] < 0 || lo[d] > size[d] - span[d]) {
      diag_error(&o->p->diag, op->span, "%s %s: %s %lld:%lld are outside the tensor's 0:%lld", verb, op->name,
                 d ? "columns" : "rows", (long long)lo[d], (long long)(lo[d] + span[d]), (long long)size[d]);
      o->failed = true;
      return false;
    }
  }
  /* an empty slice (a ragged one clipped to nothing) covers no cell */
  bool empty = !n[0] || !n[1];
  *rg = (Region){g->base, lo[0] / g->cell_rows, empty ? lo[0] / g->cell_rows : (lo[0] + span[0]) / g->cell_rows,
                 lo[1] / g->cell_cols, (lo[1] + span[1]) / g->cell_cols, g->ncols, false, false, {lo[0], lo[1]},
                 {n[0], n[1]}, step[0], step[1], NULL};
  return true;
}

/* A gather's or scatter's rows X[IDX[..], c0:c1]: each index checked, in
 * the runtime's words; the grid's rows are single rows (size_grids). */
static bool gather_region(Oracle *o, const Walk *w, const Stmt *s, const Operand *op, Region *rg) {
  const Grid *g = &o->grid[op->decl];
  const char *verb = s->op == BFRT_STORE ? "store to" : "load from";
  int64_t lo, n, at[2];
  if (!view_extent(o, w, op, 1, &lo, &n) || !eval(o, w, op->gather->elem->lhs, &at[0]) ||
      !eval(o, w, op->gather->elem->rhs, &at[1]))
    return false;
  if (n > g->cols || lo < 0 || lo > g->cols - n) {
    diag_error(&o->p->diag, op->span, "%s %s: columns %lld:%lld are outside the tensor's 0:%lld", verb, op->name,
               (long long)lo, (long long)(lo + n), (long long)g->cols);
    o->failed = true;
    return false;
  }
  for (int64_t p = 0; p < op->gather->n; p++) {
    const Expr *bad = NULL;
    EvalEnv env = env_of(o, w);
    int status = gather_row_eval(op->gather, &env, p, &o->gather_rows[p], &bad);
    if (status) return eval_failed(o, status, &env, bad, op->span);
    if (o->gather_rows[p] < 0 || o->gather_rows[p] >= g->rows) {
      diag_error(&o->p->diag, op->span, "%s %s: index %s[%lld, %lld] = %lld (partition %lld) is outside the tensor's rows 0:%lld",
                 verb, op->name, op->gather->name, (long long)(at[0] + (op->gather->axis ? 0 : p)),
                 (long long)(at[1] + (op->gather->axis ? p : 0)), (long long)o->gather_rows[p], (long long)p,
                 (long long)g->rows);
      o->failed = true;
      return false;
    }
  }
  *rg = (Region){g->base, 0, op->gather->n, lo / g->cell_cols, (lo + n) / g->cell_cols, g->ncols, false, false,
                 {at[0], at[1]}, {op->gather->n, n}, 1, 1, o->gather_rows};
  return true;
}

/* hbm X[r, c] covers rows r*h .. r*h+h-1, cols c*w .. c*w+w-1. */
static bool hbm_region(Oracle *o, const Walk *w, const Stmt *s, int i, Region *rg) {
  const Operand *op = &s->operands[i];
  if (op->gather) return gather_region(o, w, s, op, rg);
  if (op->view) return slice_region(o, w, s, op, rg);
  const int64_t *t = partner_tile(s, i)->ext; /* the tile's rows and columns */
  const Grid *g = &o->grid[op->decl];
  int64_t r, c, r0, c0, r1, c1;
  if (!eval(o, w, op->row, &r) || !eval(o, w, op->col, &c)) return false;
  bool outside = __builtin_mul_overflow(r, t[0], &r0) || __builtin_mul_overflow(c, t[1], &c0) ||
                 __builtin_add_overflow(r0, t[0], &r1) ||
                 __builtin_add_overflow(c0, t[1], &c1) || r0 < 0 || c0 < 0 || r1 > g->rows ||
                 c1 > g->cols;
  if (outside) {
    diag_error(&o->p->diag, op->span,
               "hbm tile %s[%lld, %lld] of %lld x %lld is outside the tensor's [%lld, %lld] "
               "with these parameters",
               op->name, (long long)r, (long long)c, (long long)t[0], (long long)t[1],
               (long long)g->rows, (long long)g->cols);
    o->failed = true;
    return false;
  }
  *rg = (Region){g->base, r0 / g->cell_rows, r1 / g->cell_rows, c0 / g->cell_cols,
                 c1 / g->cell_cols, g->ncols, false, false, {r, c}, {t[0], t[1]}, 1, 1, NULL};
  return true;
}

/* A slot, or the cells of it a view covers (whole cells: the grid's cell
 * divides every view's start and extent). The slot and view errors in
 * the words of the runtime and the reference. */
static bool tile_region(Oracle *o, const Walk *w, const Stmt *s, const Operand *op, Region *rg) {
  const Tile *t = &o->p->kernel->tiles[op->decl];
  const Grid *g = &o->tile_grid[op->decl];
  int64_t slot = 0, lo[2] = {0, 0}, size[2] = {t->rows, t->cols};
  if (op->slot && !eval(o, w, op->slot, &slot)) return false;
  if (slot < 0 || slot >= t->slots) {
    diag_error(&o->p->diag, op->span, "%s: slot %s[%lld] is out of range (%lld slots)", s->op_name,
               t->name, (long long)slot, (long long)t->slots);
    o->failed = true;
    return false;
  }
  int64_t n[2], span[2], step[2] = {op->view ? op->nd->nstep[0] : 1, op->view ? op->nd->nstep[1] : 1};
  for (int d = 0; d < 2; d++) {
    if (!view_extent(o, w, op, d, &lo[d], &n[d])) return false;
    span[d] = n[d] > 0 ? (n[d] - 1) * step[d] + 1 : n[d]; /* sema bounds a strided view's span by its tile */
    if (lo[d] < 0 || lo[d] > size[d] - span[d]) {
      diag_error(&o->p->diag, op->span, "%s: view %lld:%lld of tile %s is outside its %s 0:%lld", s->op_name,
                 (long long)lo[d], (long long)(lo[d] + span[d]), t->name, d ? "columns" : "partitions",
                 (long long)size[d]);
      o->failed = true;
      return false;
    }
  }
  int64_t base = o->tile_base[op->decl] + slot * (g->rows / g->cell_rows) * g->ncols;
  bool empty = !n[0] || !n[1]; /* a ragged view clipped to nothing covers no cell */
  *rg = (Region){base, lo[0] / g->cell_rows, empty ? lo[0] / g->cell_rows : (lo[0] + span[0]) / g->cell_rows,
                 lo[1] / g->cell_cols, (lo[1] + span[1]) / g->cell_cols, g->ncols, false, false,
                 {slot, lo[0] * t->cols + lo[1]}, {n[0], n[1]}, step[0], step[1], NULL};
  return true;
}

/* Whether the operand is read, written or both: its role in ops.def. */
static bool operand_region(Oracle *o, const Walk *w, const Stmt *s, int i, Region *rg) {
  const Operand *op = &s->operands[i];
  bool ok = op->kind == OPND_HBM ? hbm_region(o, w, s, i, rg) : tile_region(o, w, s, op, rg);
  rg->writes = bfrt_op_writes(s->op, i);
  rg->reads = bfrt_op_reads(s->op, i);
  return ok;
}

/* The latest conflicting instance on each other engine, and (done, when
 * not NULL) its stamp: an engine's stamps grow with its positions, so the
 * latest instance has the latest stamp. */
static void gather_need(const Oracle *o, const Region *rg, int engine, int64_t *need, int64_t *done) {
  int n = o->nengines;
  for (int64_t i = rg->r0; i < rg->r1; i += rg->rs)
    for (int64_t c = rg->c0, r = rg->rows ? rg->rows[i] : i; c < rg->c1; c += rg->cs) {
      int64_t cell = (rg->base + r * rg->ncols + c) * n;
      for (int e = 0; e < n; e++) {
        if (e == engine) continue;
        int64_t w = o->last_write[cell + e], rd = rg->writes ? o->last_read[cell + e] : 0;
        if (w > need[e]) need[e] = w;
        if (rd > need[e]) need[e] = rd;
        if (!done) continue;
        int64_t wd = o->write_done[cell + e], rdd = rg->writes ? o->read_done[cell + e] : 0;
        if (wd > done[e]) done[e] = wd;
        if (rdd > done[e]) done[e] = rdd;
      }
    }
}

/* The stamp of the latest conflicting instance on the engine itself: a
 * pipelined engine keeps its own conflicting instances ordered by
 * completion (oracle_ideal_cycles). */
static int64_t gather_self_done(const Oracle *o, const Region *rg, int engine, int64_t done) {
  int n = o->nengines;
  for (int64_t i = rg->r0; i < rg->r1; i += rg->rs)
    for (int64_t c = rg->c0, r = rg->rows ? rg->rows[i] : i; c < rg->c1; c += rg->cs) {
      int64_t cell = (rg->base + r * rg->ncols + c) * n + engine;
      int64_t wd = o->write_done[cell], rdd = rg->writes ? o->read_done[cell] : 0;
      if (wd > done) done = wd;
      if (rdd > done) done = rdd;
    }
  return done;
}

static void record_access(Oracle *o, const Region *rg, int engine, int64_t pos, int64_t done) {
  int n = o->nengines;
  for (int64_t i = rg->r0; i < rg->r1; i += rg->rs)
    for (int64_t c = rg->c0, r = rg->rows ? rg->rows[i] : i; c < rg->c1; c += rg->cs) {
      int64_t cell = (rg->base + r * rg->ncols + c) * n + engine;
      if (rg->writes) o->last_write[cell] = pos;
      if (rg->reads) o->last_read[cell] = pos;
      if (!o->write_done) continue;
      if (rg->writes) o->write_done[cell] = done;
      if (rg->reads) o->read_done[cell] = done;
    }
}

/* Where an instance's operands point, so the IR's can be compared cheaply. */
static uint64_t mix(uint64_t h, int64_t v) {
  return h ^ ((uint64_t)v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2));
}

static uint64_t operand_hash(uint64_t h, int decl, const int64_t at[2]) {
  return mix(mix(mix(h, decl), at[0]), at[1]);
}

static void enqueue(Queue *q, int n, const Stmt *s, uint64_t where, const int64_t *need) {
  if (q->len == q->cap) { /* unroll the ring into arrays twice as long */
    int64_t cap = q->cap ? q->cap * 2 : 16, tail = q->cap - q->head;
    const Stmt **instr = resize(NULL, cap, sizeof *instr);
    uint64_t *wh = resize(NULL, cap, sizeof *wh);
    int64_t *nd = resize(NULL, cap * n, sizeof *nd);
    if (q->len) {
      memcpy(instr, q->instr + q->head, (size_t)tail * sizeof *instr);
      memcpy(instr + tail, q->instr, (size_t)q->head * sizeof *instr);
      memcpy(wh, q->where + q->head, (size_t)tail * sizeof *wh);
      memcpy(wh + tail, q->where, (size_t)q->head * sizeof *wh);
      memcpy(nd, q->need + q->head * n, (size_t)(tail * n) * sizeof *nd);
      memcpy(nd + tail * n, q->need, (size_t)(q->head * n) * sizeof *nd);
    }
    free(q->instr);
    free(q->where);
    free(q->need);
    *q = (Queue){0, q->len, cap, instr, wh, nd};
  }
  int64_t slot = (q->head + q->len++) % q->cap;
  q->instr[slot] = s;
  q->where[slot] = where;
  memcpy(q->need + slot * n, need, sizeof(int64_t) * (size_t)n);
}

static void dequeue(Queue *q) {
  q->head = (q->head + 1) % q->cap;
  q->len--;
}

/* Operand i's shape as this instance runs it, as the simulator charges it:
 * its region's extents (a ragged view's or slice's clipped; an hbm tile's,
 * its partner's); an immediate takes the destination's. */
static void run_shape(const Stmt *s, const Region *rg, int i, int64_t shape[2]) {
  if (s->operands[i].kind == OPND_IMM) {
    run_shape(s, rg, 0, shape);
    return;
  }
  int r = 0;
  for (int j = 0; j < i; j++) r += s->operands[j].kind != OPND_IMM;
  shape[0] = rg[r].n[0];
  shape[1] = rg[r].n[1];
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ---- Device reads: what an engine must read to run its own stream. */

static uint64_t read_hash(const ReadKey *k) {
  return mix(mix(mix(mix(0, k->engine), k->tensor), k->row), k->col) * 0x9e3779b97f4a7c15u;
}

/* Add the key; whether it was new. */
static bool read_insert(Ideal *id, ReadKey key) {
  if (2 * (id->nread + 1) > id->read_cap) {
    ReadKey *old = id->read_set;
    int64_t old_cap = id->read_cap;
    id->read_cap = old_cap ? 2 * old_cap : 64;
    id->read_set = resize(NULL, id->read_cap, sizeof *id->read_set);
    for (int64_t i = 0; i < id->read_cap; i++) id->read_set[i].engine = -1;
    id->nread = 0;
    for (int64_t i = 0; i < old_cap; i++)
      if (old[i].engine >= 0) read_insert(id, old[i]);
    free(old);
  }
  for (uint64_t i = read_hash(&key) & (uint64_t)(id->read_cap - 1);; i = (i + 1) & (uint64_t)(id->read_cap - 1)) {
    ReadKey *k = &id->read_set[i];
    if (k->engine < 0) {
      *k = key;
      id->nread++;
      return true;
    }
    if (k->engine == key.engine && k->tensor == key.tensor && k->row == key.row && k->col == key.col) return false;
  }
}

/* The elements e reads (it evaluated already), for each engine of the
 * mask; only the ideal with sync costs charges them. */
static void note_reads(Oracle *o, const Walk *w, const Expr *e, uint32_t engines) {
  if (!e || !engines || !w->ideal || !w->ideal->charge_sync) return;
  note_reads(o, w, e->lhs, engines);
  note_reads(o, w, e->rhs, engines);
  int64_t row, col;
  if (e->kind != EX_ELEM || !eval(o, w, e->lhs, &row) || !eval(o, w, e->rhs, &col)) return;
  for (int engine = 0; engine < o->nengines; engine++)
    if (engines >> engine & 1 && read_insert(w->ideal, (ReadKey){row, col, e->index, engine}))
      w->ideal->pending_reads[engine]++;
}

/* The same for a condition, whose && and || read their right side only
 * when the left does not decide. */
static void note_cond_reads(Oracle *o, const Walk *w, const Cond *c, uint32_t engines) {
  bool left;
  switch (c->kind) {
  case COND_CMP:
    note_reads(o, w, c->lhs, engines);
    note_reads(o, w, c->rhs, engines);
    return;
  case COND_NOT: note_cond_reads(o, w, c->left, engines); return;
  case COND_AND:
  case COND_OR:
    note_cond_reads(o, w, c->left, engines);
    if (eval_cond(o, w, c->left, &left) && left == (c->kind == COND_AND)) note_cond_reads(o, w, c->right, engines);
    return;
  }
}

/* The engines with an instruction in list, filling the loops' and the
 * conditionals' masks on the way. */
static uint32_t engines_in(Oracle *o, const Stmt *s) {
  uint32_t all = 0;
  for (; s; s = s->next) {
    uint32_t here = s->kind == ST_INSTR ? (uint32_t)1 << s->engine : engines_in(o, s->body);
    if (s->kind == ST_IF) here |= engines_in(o, s->orelse);
    if (s->kind == ST_FOR) o->loop_engines[s->loop_id] = here;
    if (s->kind == ST_IF) o->if_engines[s->if_id] = here;
    all |= here;
  }
  return all;
}

static int64_t read_cost(const Oracle *o, const bfrt_costs *costs, int engine) {
  return costs->kind[o->p->target->engines[engine].kind].device_read_cost;
}

/* An engine free since free_at that could start at start spends `reads`
 * cycles reading first: in its idle time (*idle, plus the gap up to start)
 * as far as it holds them. Returns the start. */
static int64_t spend_idle(int64_t *idle, int64_t free_at, int64_t start, int64_t reads) {
  *idle += start - free_at;
  if (*idle >= reads) {
    *idle -= reads;
    return start;
  }
  start += reads - *idle;
  *idle = 0;
  return start;
}

/* Drop the clocks of e no lookup can reach. Engine c looks e up only at a
 * need above known[c][e], and a need is a position of e that some cell
 * holds now, or a later one (which finds the last clock). The cell scan
 * costs the grid, so a history is compacted only once it holds the grid's
 * cells over the engines: what it keeps grows with the grid (at most a
 * clock per live position), never with the instance count. */
static void compact_ideal_history(Oracle *o, Ideal *id, int e) {
  int n = o->nengines;
  int64_t floor = INT64_MAX;
  for (int c = 0; c < n; c++)
    if (c != e && id->known[c][e] < floor) floor = id->known[c][e];
  History *h = &id->history[e];
  for (int64_t cell = 0; cell < o->ncells; cell++) {
    int64_t written = o->last_write[cell * n + e], read = o->last_read[cell * n + e];
    if (written > floor) history_mark(h, written);
    if (read > floor) history_mark(h, read);
  }
  history_compact(h, n);
}

/* The must-wait test. Whether the instance at pos of engine c must wait:
 * some need on another engine is above what c knows complete. c then
 * learns, for each such need, what that engine knew after the needed
 * instance (a wait joins the clock at its threshold, as in the abstract
 * execution). A need at or below known[c][e] teaches nothing: c learned
 * it from a clock of e at or past it, which holds e's clock there. */
static bool must_wait(Oracle *o, Ideal *id, int c, int64_t pos, const int64_t *need) {
  int n = o->nengines;
  int64_t *known = id->known[c], theirs[BFRT_MAX_ENGINES];
  bool waits = false;
  for (int e = 0; e < n; e++) {
    if (e == c || need[e] <= known[e]) continue;
    waits = true;
    history_clock(&id->history[e], n, e, need[e], theirs);
    join(known, theirs, n);
  }
  known[c] = pos;
  if (waits && history_push(&id->history[c], n, pos, known, max64(64, o->ncells / n))) compact_ideal_history(o, id, c);
  return waits;
}

/* One step of the list schedule: the instance at pos of engine c starts
 * when c can issue, its own latest conflicting instance and the one window
 * back are done, and its needs on the other engines are; with
 * charge_sync, those needs become visible sem_latency after they complete,
 * and an instance that must wait pays wait_cost after its engine is free
 * and they are visible (runtime/sim.c: a wait ends at the later of the
 * two plus wait_cost; the engine keeps its own conflicting transfers and
 * its window at the op, which may overlap the waits). */
static void ideal_instance(Oracle *o, Walk *w, const Stmt *s, const Region *rg, int nrg, int64_t pos) {
  Ideal *id = w->ideal;
  const Target *target = o->p->target;
  int c = s->engine, n = o->nengines;
  int64_t need[BFRT_MAX_ENGINES] = {0}, done[BFRT_MAX_ENGINES] = {0}, own = 0;
  for (int i = 0; i < nrg; i++) gather_need(o, &rg[i], c, need, done);
  for (int i = 0; i < nrg; i++) own = gather_self_done(o, &rg[i], c, own);
  int64_t window = id->window[c];
  if (pos > window) own = max64(own, id->recent[c][pos % window]);
  int64_t ready = id->free_at[c]; /* c is free and every instance it needs on other engines is visible */
  for (int e = 0; e < n; e++) {
    if (e == c) continue;
    int64_t latency = id->charge_sync && need[e] > 0 ? id->costs->kind[target->engines[e].kind].sem_latency : 0;
    ready = max64(ready, done[e] + latency);
  }
  int64_t wait = id->charge_sync && must_wait(o, id, c, pos, need) ? id->costs->kind[target->engines[c].kind].wait_cost : 0;
  int64_t start = max64(ready + wait, own);
  /* the reads fit in the time c is neither busy nor waiting */
  if (id->charge_sync) start = spend_idle(&id->idle[c], id->free_at[c] + wait, start, id->pending_reads[c] * read_cost(o, id->costs, c));
  id->pending_reads[c] = 0;
  int64_t dst[2], src[2];
  run_shape(s, rg, 0, dst);
  run_shape(s, rg, bfrt_op_source(s->op), src);
  int64_t runs = 1; /* as the simulator: a slice with a column step, one run per element (as run) */
  for (int i = 0, r = 0; i < s->noperands; i++) {
    if (s->operands[i].kind == OPND_IMM) continue;
    if (s->operands[i].kind == OPND_HBM && s->operands[i].view && s->operands[i].cstep > 1) runs = rg[r].n[1];
    r++;
  }
  bfrt_op_time t = bfrt_op_timing_shaped(id->costs, target->engines[c].kind, s->op, dst, src,
                                         instr_elem_bytes(o->p->kernel, s), runs);
  id->free_at[c] = start + t.occupancy;
  id->done[c] = max64(id->done[c], start + t.completion);
  id->recent[c][pos % window] = id->done[c];
  id->makespan = max64(id->makespan, id->done[c]);
  id->dma_work += t.dma_engines * t.stream;
  for (int i = 0; i < nrg; i++) record_access(o, &rg[i], c, pos, id->done[c]);
}

/* The needs of the instance at pos of its engine, queued for the schedule. */
static void need_instance(Oracle *o, Walk *w, const Stmt *s, const Region *rg, int nrg, uint64_t where, int64_t pos) {
  int64_t need[BFRT_MAX_ENGINES] = {0};
  for (int i = 0; i < nrg; i++) gather_need(o, &rg[i], s->engine, need, NULL);
  for (int i = 0; i < nrg; i++) record_access(o, &rg[i], s->engine, pos, 0);
  if (w->only < 0 || w->only == s->engine) enqueue(&w->queue[s->engine], o->nengines, s, where, need);
}

/* A ragged operand's extent is known only now (sema checked the other
 * shapes): the shapes as run must fit the op's rule, else the runtime's
 * and the references' error. rg: the memory operands' regions, in order
 * (an immediate is last when there is one, so rg[i] is operand i). */
static bool ragged_shapes_fit(Oracle *o, const Stmt *s, const Region *rg) {
  bool ragged = false;
  int nrg = 0;
  for (int i = 0; i < s->noperands; i++) {
    ragged |= s->operands[i].clip[0] || s->operands[i].clip[1];
    nrg += s->operands[i].kind != OPND_IMM;
  }
  if (!ragged) return true;
  const int64_t *d = rg[0].n, *a = rg[1].n, *b = nrg > 2 ? rg[2].n : d;
  bool same = d[0] == a[0] && d[1] == a[1], fits = true;
  switch (op_info(s->op)->shape) {
  case SHAPE_SAME: fits = same && b[0] == d[0] && b[1] == d[1]; break;
  case SHAPE_MATMUL: fits = d[0] == a[0] && a[1] == b[0] && d[1] == b[1]; break;
  case SHAPE_TRANSPOSE: fits = d[0] == a[1] && d[1] == a[0]; break;
  case SHAPE_ROWREDUCE: fits = d[0] == a[0] && d[1] == 1; break;
  case SHAPE_ROWBCAST: fits = same && b[0] == d[0] && b[1] == 1; break;
  case SHAPE_COLBCAST: fits = same && b[0] == 1 && b[1] == d[1]; break;
  default: break;
  }
  if (fits) return true;
  char shapes[96] = "";
  for (int i = 0, len = 0; i < nrg && len < (int)sizeof shapes; i++)
    len += snprintf(shapes + len, sizeof shapes - (size_t)len, "%s[%lld, %lld]", i ? ", " : "", (long long)rg[i].n[0],
                    (long long)rg[i].n[1]);
  diag_error(&o->p->diag, s->op_span, "%s: operand shapes do not fit the op (%s)", s->op_name, shapes);
  o->failed = true;
  return false;
}

/* instr := engine ':' op operand {',' operand} ';' -- one dynamic instance */
static void walk_instr(Oracle *o, Walk *w, const Stmt *s) {
  Region rg[BFRT_MAX_OPERANDS];
  int nrg = 0;
  uint64_t where = 0;
  for (int i = 0; i < s->noperands; i++) {
    if (s->operands[i].kind == OPND_IMM) continue;
    if (nrg == BFRT_MAX_OPERANDS) bug("oracle: more than %d memory operands on one instruction", BFRT_MAX_OPERANDS);
    if (!operand_region(o, w, s, i, &rg[nrg])) return;
    where = operand_hash(where, s->operands[i].decl, rg[nrg++].at);
  }
  for (int i = 0; i < s->noperands; i++) {
    note_reads(o, w, s->operands[i].slot, (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].row, (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].col, (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].lo[0], (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].lo[1], (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].clip[0], (uint32_t)1 << s->engine);
    note_reads(o, w, s->operands[i].clip[1], (uint32_t)1 << s->engine);
    if (s->operands[i].gather) note_reads(o, w, s->operands[i].gather->elem->lhs, (uint32_t)1 << s->engine);
    if (s->operands[i].gather) note_reads(o, w, s->operands[i].gather->elem->rhs, (uint32_t)1 << s->engine);
  }
  if (!ragged_shapes_fit(o, s, rg)) return;
  int64_t pos = ++w->count[s->engine];
  w->last = s;
  if (w->mode == WALK_NEEDS) need_instance(o, w, s, rg, nrg, where, pos);
  if (w->mode == WALK_IDEAL) ideal_instance(o, w, s, rg, nrg, pos);
}

/* Count n steps; past the program's step limit, an error and the walk stops. */
static bool count_steps(Oracle *o, Walk *w, Span span, uint64_t n) {
  if (n <= (uint64_t)(o->p->max_steps - w->steps)) {
    w->steps += (int64_t)n;
    return true;
  }
  diag_error(&o->p->diag, span, "%s", steps_exceeded(o->p));
  o->failed = true;
  return false;
}

static bool count_step(Oracle *o, Walk *w, Span span) { return count_steps(o, w, span, 1); }

static void push_body(Walk *w, const Stmt *body, const Stmt *loop, int64_t hi) {
  w->frames[w->depth++] = (WalkFrame){body, loop, hi};
}

/* for := 'for' var 'in' expr '..' expr '{' stmts '}' -- bounds at entry */
static void walk_for(Oracle *o, Walk *w, const Stmt *s) {
  int64_t lo, hi;
  if (!eval(o, w, s->lo, &lo) || !eval(o, w, s->hi, &hi)) return;
  note_reads(o, w, s->lo, o->loop_engines[s->loop_id]);
  note_reads(o, w, s->hi, o->loop_engines[s->loop_id]);
  if (ir_trips(lo, hi) > IR_MAX_TRIPS) {
    diag_error(&o->p->diag, s->span,
               "loop runs %llu iterations (%lld .. %lld) with these parameters, more than "
               "64-bit counters can count",
               (unsigned long long)ir_trips(lo, hi), (long long)lo, (long long)hi);
    o->failed = true;
    return;
  }
  /* an empty body is not walked, but its iterations count, as the reference's do */
  if (lo >= hi || !count_steps(o, w, s->span, s->body ? 1 : ir_trips(lo, hi)) || !s->body) return;
  w->loopvars[s->loop_id] = lo;
  push_body(w, s->body, s, hi);
}

/* if := 'if' '(' cond ')' '{' stmts '}' ['else' ('{' stmts '}' | if)] */
static void walk_if(Oracle *o, Walk *w, const Stmt *s) {
  bool holds;
  if (!eval_cond(o, w, s->cond, &holds)) return;
  note_cond_reads(o, w, s->cond, o->if_engines[s->if_id]);
  const Stmt *branch = holds ? s->body : s->orelse;
  if (branch) push_body(w, branch, NULL, 0);
}

/* Walk on to the next instance and handle it as the mode says: false at
 * the end of the kernel or after an error. */
static bool walk_next(Oracle *o, Walk *w) {
  while (w->depth > 0 && !o->failed) {
    WalkFrame *f = &w->frames[w->depth - 1];
    if (!f->next) { /* the end of a body: the loop's next iteration, or pop */
      if (f->loop && ++w->loopvars[f->loop->loop_id] < f->hi && count_step(o, w, f->loop->span))
        f->next = f->loop->body;
      else
        w->depth--;
      continue;
    }
    const Stmt *s = f->next;
    f->next = s->next;
    switch (s->kind) {
    case ST_FOR: walk_for(o, w, s); break;
    case ST_BLOCK: push_body(w, s->body, NULL, 0); break;
    case ST_INSTR:
      if (count_step(o, w, s->span)) walk_instr(o, w, s);
      return !o->failed;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF: walk_if(o, w, s); break;
    }
  }
  return false;
}

static int body_depth(const Stmt *s) {
  int deepest = 0;
  for (; s; s = s->next) {
    int d = s->kind == ST_INSTR ? 0 : 1 + body_depth(s->body);
    int orelse = s->kind == ST_IF ? 1 + body_depth(s->orelse) : 0; /* once: an else-if chain is 2^n calls otherwise */
    if (orelse > d) d = orelse;
    if (d > deepest) deepest = d;
  }
  return deepest;
}

/* Requires: oracle_new's counting walk succeeded (every later walk then
 * does too: the same parameters, the same statements). */
static void walk_start(Oracle *o, Walk *w, WalkMode mode) {
  Arena *arena = o->p->arena;
  *w = (Walk){.mode = mode, .only = -1};
  w->frames = ARENA_ARRAY(arena, WalkFrame, o->max_depth + 1);
  w->loopvars = ARENA_ARRAY(arena, int64_t, o->p->kernel->nloops + 1);
  push_body(w, o->p->kernel->body, NULL, 0);
  if (mode == WALK_COUNT) return;
  size_t cells = sizeof(int64_t) * (size_t)(o->ncells * o->nengines + 1);
  if (!o->last_write) {
    o->last_write = arena_alloc(arena, cells);
    o->last_read = arena_alloc(arena, cells);
  }
  memset(o->last_write, 0, cells);
  memset(o->last_read, 0, cells);
  if (mode != WALK_IDEAL) return;
  if (!o->write_done) {
    o->write_done = arena_alloc(arena, cells);
    o->read_done = arena_alloc(arena, cells);
  }
  memset(o->write_done, 0, cells);
  memset(o->read_done, 0, cells);
}

static void walk_finish(Oracle *o, Walk *w) {
  for (int e = 0; e < o->nengines; e++) {
    free(w->queue[e].instr);
    free(w->queue[e].where);
    free(w->queue[e].need);
  }
  if (!w->ideal) return;
  for (int e = 0; e < o->nengines; e++) {
    free(w->ideal->recent[e]);
    history_free(&w->ideal->history[e]);
  }
  free(w->ideal->read_set);
}

Oracle *oracle_new(Program *p, const int64_t *params) {
  const Kernel *k = p->kernel;
  Oracle *o = ARENA_NEW(p->arena, Oracle);
  o->p = p;
  o->params = params;
  o->nengines = p->target->nengines;
  o->max_depth = 1 + body_depth(k->body);
  o->loop_engines = ARENA_ARRAY(p->arena, uint32_t, k->nloops + 1);
  o->if_engines = ARENA_ARRAY(p->arena, uint32_t, k->nifs + 1);
  engines_in(o, k->body);
  o->tile_base = ARENA_ARRAY(p->arena, int64_t, k->ntiles + 1);
  o->grid = ARENA_ARRAY(p->arena, Grid, k->ntensors + 1);
  o->tile_grid = ARENA_ARRAY(p->arena, Grid, k->ntiles + 1);
  walk_start(o, &o->first, WALK_COUNT);
  size_grids(o);
  number_cells(o);
  if (o->failed) return NULL;
  while (walk_next(o, &o->first)) {}
  memcpy(o->total, o->first.count, sizeof o->total);
  return o->failed ? NULL : o;
}

int64_t oracle_instances(const Oracle *o, int engine) { return o->total[engine]; }

/* A walk of its own up to the instance: a test tool, not for every instance. */
int64_t oracle_need(Oracle *o, int engine, int64_t position, int producer) {
  if (position < 1 || position > o->total[engine]) bug("oracle_need: position %lld out of range", (long long)position);
  Walk w;
  walk_start(o, &w, WALK_NEEDS);
  w.only = engine;
  Queue *q = &w.queue[engine];
  while (w.count[engine] < position && walk_next(o, &w))
    if (w.count[engine] < position) q->len = q->head = 0; /* only position's is wanted */
  int64_t need = q->need[((q->head + q->len - 1) % q->cap) * o->nengines + producer];
  walk_finish(o, &w);
  return need;
}

/* The statement of the instance at position of engine: a walk of its own,
 * for the few races a log describes. */
static const Stmt *instance_at(Oracle *o, int engine, int64_t position) {
  Walk w;
  walk_start(o, &w, WALK_COUNT);
  while (w.count[engine] < position && walk_next(o, &w)) {}
  if (w.count[engine] != position) bug("oracle: engine %d has no instance %lld", engine, (long long)position);
  return w.last;
}

/* The makespan of the list schedule; with charge_sync, every cross-engine
 * dependence pays its producer's sem_latency, every instruction that must
 * wait pays its engine's wait_cost once, and every engine reads each
 * device integer its own stream depends on once (a loop bound or
 * condition around one of its instructions, an operand's index) at
 * device_read_cost, in its idle time before the first instance that needs
 * it (the values never change, so any earlier idle time will do).
 *
 * Why no counter scheme with exact thresholds (every wait's threshold at
 * most its next instruction's need, as verify checks) beats it. An engine
 * learns that an instance of e is complete only from a wait on a counter
 * at or past it, or from a wait on an instance of another engine that had
 * learned it: knowledge is a vector clock, and a wait joins the clock its
 * producer had at the threshold. By induction in program order, the
 * scheme's clock at every instance is at most must_wait's: a wait before
 * x on e reaches at most need_e(x), and must_wait joins e's clock there,
 * which holds e's clock at any lower position. So where must_wait finds a
 * need not covered, the scheme's clock does not cover it either and x
 * runs after at least one wait. In the simulator a wait ends wait_cost
 * after the later of its engine's clock and its counter's visibility
 * (completion + sem_latency), and every instance x needs is visible then:
 * waited on directly, or known through an earlier wait whose own
 * visibility came later. So x starts no earlier than wait_cost after its
 * engine is free and its needs are visible, what ideal_instance charges;
 * a dependence known complete costs no wait but still lies sem_latency
 * behind its completion on any path that taught it. The rest is the
 * ideal's: each instance is charged no later than in any schedule of
 * these costs, so by induction neither is the makespan. */
static int64_t ideal_makespan(Oracle *o, const bfrt_costs *costs, bool charge_sync) {
  Ideal id = {.costs = costs, .charge_sync = charge_sync};
  for (int e = 0; e < o->nengines; e++) {
    id.window[e] = bfrt_op_window(costs, o->p->target->engines[e].kind);
    id.recent[e] = resize(NULL, id.window[e], sizeof(int64_t));
  }
  Walk w;
  walk_start(o, &w, WALK_IDEAL);
  w.ideal = &id;
  while (walk_next(o, &w)) {}
  /* reads after an engine's last instance (a loop it skips by its bound) come after its last issue */
  for (int e = 0; charge_sync && e < o->nengines; e++)
    id.makespan = max64(id.makespan, spend_idle(&id.idle[e], id.free_at[e], id.free_at[e], id.pending_reads[e] * read_cost(o, costs, e)));
  walk_finish(o, &w);
  /* The queues share the target's dma_split DMA engines: no schedule
   * streams faster than all of them at once (a bound, not a schedule). */
  int64_t shared = costs->kind[BFRT_KIND_DMA].dma_split;
  return shared > 0 ? max64(id.makespan, (id.dma_work + shared - 1) / shared) : id.makespan;
}

int64_t oracle_ideal_cycles(Oracle *o, const bfrt_costs *costs) { return ideal_makespan(o, costs, false); }

int64_t oracle_ideal_sync_cycles(Oracle *o, const bfrt_costs *costs) { return ideal_makespan(o, costs, true); }

/* ---- The abstract execution of the IR streams. */

typedef enum Status { RUNNING, WAITING, AT_BARRIER } Status;

typedef struct Frame {
  const IrNode *next; /* next node of this body; NULL at its end */
  const IrNode *loop; /* the IR_LOOP whose body this is; NULL for the stream */
  int64_t hi;
} Frame;

/* An executed wait, judged when its engine's next op comes. */
typedef struct Pending {
  int engine;
  int64_t global; /* threshold as a position in engine's whole stream */
  const IrNode *node;
  int order;      /* in ir_mutate's order */
  bool redundant; /* implied before it executed */
  bool joins;     /* engine's clock at global can teach the group something: */
  int64_t snap[BFRT_MAX_ENGINES]; /* ... that clock */
} Pending;

typedef struct Interp {
  Frame *frames;
  int depth;
  Status status;
  const IrNode *waiting; /* WAITING: the wait; AT_BARRIER: the barrier */
  int64_t wait_threshold;
  bool held; /* its next op is held by back-pressure */
  int64_t *loopvars, *vars, **arrays, *array_len;
  int64_t known[BFRT_MAX_ENGINES];
  int64_t clock[BFRT_MAX_ENGINES]; /* vector clock over stream positions */
  Pending *pending; /* the group of waits since the previous op */
  int npending, pending_cap;
  int64_t group_clock[BFRT_MAX_ENGINES]; /* the clock before the group's first wait */
  bool changed;  /* clock learned something since its engine's history last kept it */
  bool captured; /* WAITING: the producer reached the threshold, and its clock then is: */
  int64_t capture[BFRT_MAX_ENGINES];
} Interp;

/* A wait node and its index in ir_mutate's order (engine, then pre-order). */
typedef struct WaitEntry {
  const IrNode *node;
  int order;
} WaitEntry;

/* Every wait node, sorted by address to find a node's index. */
typedef struct WaitIndex {
  int n, cap;
  WaitEntry *entries;
  int max_depth[BFRT_MAX_ENGINES]; /* deepest loop nesting of each stream, plus 1 */
  bool waits_on[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES]; /* [c][e]: c's stream has a wait on e */
} WaitIndex;

typedef struct Schedule {
  Oracle *o;
  const IrProgram *ir;
  const WaitIndex *waits;
  int n;
  Interp in[BFRT_MAX_ENGINES];
  int64_t counter[BFRT_MAX_ENGINES]; /* S_e as the engines see it */
  int64_t pos[BFRT_MAX_ENGINES];     /* ops completed since the start */
  int64_t base[BFRT_MAX_ENGINES];    /* pos at the last barrier */
  int64_t seen[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES]; /* seen[c][e]: S_e as c last read it */
  uint32_t consumers[BFRT_MAX_ENGINES]; /* bit c: c waits on e's counter */
  History history[BFRT_MAX_ENGINES];
  Walk walk; /* the sequential walk, as far as the engine furthest ahead */
  OracleStats *st;
  FILE *log;
  int logged;
  uint64_t rng;
  bool stop;
} Schedule;

#define MAX_LOG_LINES 20

/* Whether report prints the next line. */
static bool will_log(const Schedule *s) { return s->log && s->logged < MAX_LOG_LINES; }

static void report(Schedule *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(Schedule *s, const char *fmt, ...) {
  if (!s->log || s->logged > MAX_LOG_LINES) return;
  if (s->logged++ == MAX_LOG_LINES) {
    fprintf(s->log, "%s: (further reports omitted)\n", s->o->p->src.path);
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  fprintf(s->log, "%s:", s->o->p->src.path);
  vfprintf(s->log, fmt, ap);
  fputc('\n', s->log);
  va_end(ap);
}

static const char *engine_name(const Schedule *s, int e) { return s->o->p->target->engines[e].name; }

static int64_t wrap(uint64_t v) { return (int64_t)v; }

/* The IR has lines, not spans: report in the diagnostic format without a caret. */
static int64_t division_by_zero(Schedule *s, int line) {
  fprintf(s->o->p->diag.out, "%s:%d: error: division by zero with these parameters\n",
          s->o->p->src.path, line);
  s->o->p->diag.errors++;
  s->stop = true;
  return 0;
}

static int64_t ir_eval(Schedule *s, Interp *in, const IrExpr *x);

/* A device integer read by the engine: the same value the walk read. */
static int64_t ir_elem_eval(Schedule *s, Interp *in, const IrExpr *x) {
  const Program *p = s->o->p;
  int64_t row = ir_eval(s, in, x->a), col = ir_eval(s, in, x->b);
  const int64_t *shape = p->device_shape[x->id];
  if (s->stop) return 0;
  if (row < 0 || row >= shape[0] || col < 0 || col >= shape[1]) {
    fprintf(p->diag.out, "%s:%d: error: element %s[%lld, %lld] is out of bounds (%s is %lld x %lld)\n",
            p->src.path, x->line, p->kernel->tensors[x->id].name, (long long)row, (long long)col,
            p->kernel->tensors[x->id].name, (long long)shape[0], (long long)shape[1]);
    s->o->p->diag.errors++;
    s->stop = true;
    return 0;
  }
  int32_t v;
  memcpy(&v, (const char *)p->device_ints[x->id] + 4 * (row * shape[1] + col), sizeof v);
  return v;
}

/* The checked row of an hbm tile: the walk ran every access these
 * coordinates come from, so a tile outside its tensor is a transform bug. */
static int64_t ir_hbm_row_eval(Schedule *s, Interp *in, const IrExpr *x) {
  int64_t row = ir_eval(s, in, x->a), col = ir_eval(s, in, x->b);
  const Grid *g = &s->o->grid[x->id];
  const Tile *t = &s->o->p->kernel->tiles[x->c->value];
  if (!s->stop && (row < 0 || col < 0 || row > g->rows / t->rows - 1 || col > g->cols / t->cols - 1))
    bug("oracle: line %d: bookkeeping for hbm tile %s[%lld, %lld] outside the tensor", x->line,
        s->o->p->kernel->tensors[x->id].name, (long long)row, (long long)col);
  return row;
}

/* A checked view start or slot: likewise a transform bug when out of range. */
static int64_t ir_tile_at_eval(Schedule *s, Interp *in, const IrExpr *x) {
  int64_t at = ir_eval(s, in, x->a), n = x->b->value, dim = x->c->value, size;
  if (dim > 2) {
    size = dim == 3 ? s->o->grid[x->id].rows : s->o->grid[x->id].cols;
  } else {
    const Tile *t = &s->o->p->kernel->tiles[x->id];
    size = dim == 0 ? t->rows : dim == 1 ? t->cols : t->slots;
  }
  if (!s->stop && (at < 0 || at > size - n))
    bug("oracle: line %d: bookkeeping for %s %d outside it (%lld)", x->line, dim > 2 ? "tensor" : "tile", x->id,
        (long long)at);
  return at;
}

/* The entries of set x (IX_ROWS) in array `array`: their max (store
 * false), or each set to value. The walk checked every row these come
 * from, so one outside the tensor is a transform bug. */
static int64_t ir_rows_eval(Schedule *s, Interp *in, const IrExpr *x, int array, bool store, int64_t value) {
  const Program *p = s->o->p;
  const IrRows *r = x->rows;
  int64_t a = ir_eval(s, in, x->a), b = ir_eval(s, in, x->b), c0 = ir_eval(s, in, x->c), ncols = ir_eval(s, in, r->ncols);
  int64_t count = r->gather ? r->n : b < 0 ? 0 : b > r->n ? r->n : b, most = 0;
  const Grid *g = &s->o->grid[x->id];
  for (int64_t q = 0; q < count && !s->stop; q++) {
    int64_t row = a + q;
    if (r->gather) {
      const int64_t *shape = p->device_shape[r->gather - 1];
      int64_t at[2] = {a, b};
      at[r->axis] += q;
      if (at[0] < 0 || at[0] >= shape[0] || at[1] < 0 || at[1] >= shape[1])
        bug("oracle: line %d: bookkeeping for an index outside its tensor", x->line);
      int32_t v;
      memcpy(&v, (const char *)p->device_ints[r->gather - 1] + 4 * (at[0] * shape[1] + at[1]), sizeof v);
      row = v;
    }
    if (row < 0 || row >= g->rows || c0 < 0 || c0 + r->kc > ncols || (row + 1) * ncols > in->array_len[array])
      bug("oracle: line %d: bookkeeping for row %lld of tensor %s outside it", x->line, (long long)row,
          p->kernel->tensors[x->id].name);
    for (int64_t j = 0; j < r->kc; j++) {
      int64_t *e = &in->arrays[array][row * ncols + c0 + j];
      if (store) *e = value;
      else if (*e > most) most = *e;
    }
  }
  return most;
}

static int64_t ir_eval(Schedule *s, Interp *in, const IrExpr *x) {
  if (s->stop) return 0;
  switch (x->kind) {
  case IX_CONST: return x->value;
  case IX_PARAM: return s->o->params[x->id];
  case IX_LOOPVAR: return in->loopvars[x->id];
  case IX_VAR: return in->vars[x->id];
  case IX_LOAD: {
    if (x->a->kind == IX_ROWS) return ir_rows_eval(s, in, x->a, x->id, false, 0);
    int64_t i = ir_eval(s, in, x->a);
    if (i < 0 || i >= in->array_len[x->id])
      bug("oracle: line %d: bookkeeping array %d index %lld out of range", x->line, x->id,
          (long long)i);
    return in->arrays[x->id][i];
  }
  default: break;
  }
  switch (x->kind) {
  case IX_ELEM: return ir_elem_eval(s, in, x);
  case IX_HBM_ROW: return ir_hbm_row_eval(s, in, x);
  case IX_TILE_AT: return ir_tile_at_eval(s, in, x);
  case IX_NOT: return !ir_eval(s, in, x->a);
  case IX_AND: return ir_eval(s, in, x->a) && ir_eval(s, in, x->b);
  case IX_OR: return ir_eval(s, in, x->a) || ir_eval(s, in, x->b);
  case IX_SELECT: return ir_eval(s, in, x->a) ? ir_eval(s, in, x->b) : ir_eval(s, in, x->c);
  default: break;
  }
  int64_t a = ir_eval(s, in, x->a), b = ir_eval(s, in, x->b);
  switch (x->kind) {
  case IX_LT: return a < b;
  case IX_LE: return a <= b;
  case IX_GT: return a > b;
  case IX_GE: return a >= b;
  case IX_EQ: return a == b;
  case IX_NE: return a != b;
  case IX_ADD: return wrap((uint64_t)a + (uint64_t)b);
  case IX_SUB: return wrap((uint64_t)a - (uint64_t)b);
  case IX_MUL: return wrap((uint64_t)a * (uint64_t)b);
  case IX_MAX: return a > b ? a : b;
  case IX_TRIPS: return (int64_t)ir_trips(a, b); /* below 2^63: the walk stopped longer loops */
  case IX_DIV:
  case IX_MOD:
    if (b == 0) return division_by_zero(s, x->line);
    return x->kind == IX_DIV ? int_floor_div(a, b) : int_floor_mod(a, b);
  default: bug("oracle: bad IR expression kind %d", x->kind);
  }
}

/* Pop finished bodies and start the next iteration of finished loop bodies. */
static void settle(Interp *in) {
  while (in->depth > 0 && !in->frames[in->depth - 1].next) {
    Frame *f = &in->frames[in->depth - 1];
    if (f->loop && ++in->loopvars[f->loop->loop_id] < f->hi)
      f->next = f->loop->body;
    else
      in->depth--;
  }
}

static bool done(const Interp *in) { return in->status == RUNNING && in->depth == 0; }

static int wait_order(const WaitIndex *w, const IrNode *node) {
  int lo = 0, hi = w->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (w->entries[mid].node == node) return w->entries[mid].order;
    if ((uintptr_t)w->entries[mid].node < (uintptr_t)node)
      lo = mid + 1;
    else
      hi = mid;
  }
  bug("oracle: wait node not in the stream");
}

/* The lowest op of e a wait can still look up. An engine c looks up e's
 * clock at t only when t is above what c's group of waits started from
 * (finish_wait), and that only grows; an engine waiting on e now gets the
 * clock at its threshold as e passes it (capture_for_waiters), and waits
 * on e after it for more (the guard). */
static int64_t history_floor(const Schedule *s, int e) {
  int64_t floor = INT64_MAX;
  for (int c = 0; c < s->n; c++) {
    const Interp *in = &s->in[c];
    if (!s->waits->waits_on[c][e] || (in->status == WAITING && in->waiting->engine == e)) continue;
    int64_t from = in->npending ? in->group_clock[e] : in->clock[e];
    if (from < floor) floor = from;
  }
  return floor;
}

/* Drop the clocks no lookup can reach: lookups come at every t > floor. */
static void compact_history(Schedule *s, int e) {
  History *h = &s->history[e];
  int64_t floor = history_floor(s, e);
  for (int64_t i = floor == INT64_MAX ? h->len : max64(0, history_find(h, floor + 1)); i < h->len; i++)
    h->mark[i] = true;
  history_compact(h, s->n);
}

/* After e's op k: keep its clock if it changed and a stream can look it up. */
static void keep_clock(Schedule *s, int e, int64_t k) {
  Interp *in = &s->in[e];
  History *h = &s->history[e];
  bool watched = false;
  for (int c = 0; c < s->n; c++) watched |= s->waits->waits_on[c][e];
  if (!in->changed || !watched) return;
  in->changed = false;
  if (history_push(h, s->n, k, in->clock, 64)) compact_history(s, e);
}

/* After e's op k: hand its clock to the engines waiting for exactly k. */
static void capture_for_waiters(Schedule *s, int e, int64_t k) {
  for (int c = 0; c < s->n; c++) {
    Interp *in = &s->in[c];
    if (in->status != WAITING || in->waiting->engine != e || s->base[e] + in->wait_threshold != k) continue;
    memcpy(in->capture, s->in[e].clock, sizeof in->capture);
    in->captured = true;
  }
}

/* The guarded wait completes: knowledge flows from e's op at the threshold. */
static void push_pending(Schedule *s, Interp *in, Pending pw) {
  if (in->npending == in->pending_cap) {
    in->pending_cap = in->pending_cap ? in->pending_cap * 2 : 8;
    in->pending = grow(s->o->p->arena, in->pending, in->npending, in->pending_cap, sizeof *in->pending);
  }
  in->pending[in->npending++] = pw;
}

/* The counter window (docs/algorithm.md, section 7): engine c reads S_e's
 * low counter_bits bits and extends them from seen[c][e], exact while S_e
 * is less than 2^counter_bits past it. c reads every counter it tracks at
 * each op and at each wait's start; a blocked engine reads all along, which
 * idle() lets a producer stand for (hold). */
static bool idle(const Schedule *s, int c) {
  const Interp *in = &s->in[c];
  return in->status != RUNNING || in->depth == 0 || in->held;
}

static void read_counters(Schedule *s, int c) {
  int64_t span = target_counter_span(s->o->p->target);
  for (int e = 0; e < s->n; e++) {
    if (!(s->consumers[e] >> c & 1) || s->counter[e] <= s->seen[c][e]) continue;
    if (s->counter[e] - s->seen[c][e] > span) {
      s->st->window++;
      report(s, " counter window: %s reads S_%s = %lld, 2^%d or more past the %lld it last saw",
             engine_name(s, c), engine_name(s, e), (long long)s->counter[e], s->o->p->target->counter_bits,
             (long long)s->seen[c][e]);
    }
    s->seen[c][e] = s->counter[e];
  }
}

/* Back-pressure: whether e's next op, which makes S_e one more, must wait
 * for a consumer that has seen too little of S_e and is running (an idle
 * consumer reads S_e now). */
static bool hold(Schedule *s, int e) {
  int64_t need = s->counter[e] + 1 - target_counter_span(s->o->p->target);
  for (int c = 0; c < s->n; c++) {
    if (!(s->consumers[e] >> c & 1) || s->seen[c][e] >= need) continue;
    if (!idle(s, c)) return true;
    s->seen[c][e] = s->counter[e];
  }
  return false;
}

static void finish_wait(Schedule *s, int c) {
  Interp *in = &s->in[c];
  const IrNode *w = in->waiting;
  int e = w->engine;
  int64_t global = s->base[e] + in->wait_threshold;
  int k = wait_order(s->waits, w);
  bool redundant = in->clock[e] >= global;
  s->st->waits++;
  s->st->redundant += redundant;
  s->st->wait_executed[k]++;
  s->st->wait_redundant[k] += redundant;
  if (in->npending == 0) memcpy(in->group_clock, in->clock, sizeof in->clock);
  /* below the group's start e's clock at global is implied: clocks are
   * joins of snapshots, and each engine's snapshots grow with its ops */
  Pending pw = {e, global, w, k, redundant, global > in->group_clock[e], {0}};
  if (pw.joins && in->captured)
    memcpy(pw.snap, in->capture, sizeof pw.snap);
  else if (pw.joins)
    history_clock(&s->history[e], s->n, e, global, pw.snap);
  if (pw.joins) in->changed |= join(in->clock, pw.snap, s->n);
  in->captured = false;
  push_pending(s, in, pw);
  in->known[e] = in->wait_threshold;
  in->status = RUNNING;
}

/* IR_WAIT: t = threshold; if t > known[e]: wait S_e >= t; known[e] = t */
static void exec_wait(Schedule *s, int c, const IrNode *w) {
  Interp *in = &s->in[c];
  int64_t t = ir_eval(s, in, w->threshold);
  s->st->bookkeeping += w->threshold->kind != IX_CONST;
  s->st->engine_bookkeeping[c] += w->threshold->kind != IX_CONST;
  if (s->stop || t <= in->known[w->engine]) return;
  read_counters(s, c);
  in->waiting = w;
  in->wait_threshold = t;
  in->status = WAITING;
  if (s->counter[w->engine] >= t) finish_wait(s, c);
}

/* The waits before one op act as a group: one the others imply is needless
 * even if it ran first. Whether the group without wait i covers it. */
static bool subsumed(const Schedule *s, const Interp *in, int i) {
  int64_t clock[BFRT_MAX_ENGINES];
  memcpy(clock, in->group_clock, sizeof clock);
  for (int j = 0; j < in->npending; j++)
    if (j != i && in->pending[j].joins) join(clock, in->pending[j].snap, s->n);
  return clock[in->pending[i].engine] >= in->pending[i].global;
}

/* Judge the waits executed since c's previous op against need (NULL: none follows). */
static void judge_pending(Schedule *s, int c, const int64_t *need) {
  Interp *in = &s->in[c];
  for (int i = 0; i < in->npending; i++) {
    const Pending *pw = &in->pending[i];
    if (!pw->redundant && subsumed(s, in, i)) {
      s->st->subsumed++;
      s->st->wait_subsumed[pw->order]++;
    }
    int64_t want = need && pw->engine != c ? need[pw->engine] : 0;
    if (pw->global > want) {
      bool explained = pw->node->why && pw->node->why->fallback;
      s->st->late += !explained;
      s->st->late_explained += explained;
      if (!explained)
        report(s, "%d: late wait: %s waits for S_%s >= %lld, its next instruction needs only %lld",
               pw->node->line, engine_name(s, c), engine_name(s, pw->engine),
               (long long)(pw->global - s->base[pw->engine]), (long long)(want - s->base[pw->engine]));
    } else if (pw->global < want && in->clock[pw->engine] < want) {
      s->st->early++;
    }
  }
  in->npending = 0;
}

static void report_race(Schedule *s, int c, const Stmt *b, int e, int64_t need) {
  const Program *p = s->o->p;
  const Stmt *a = will_log(s) ? instance_at(s->o, e, need) : b; /* b: not printed */
  report(s, "%d: race: %s `%s` may start before %s `%s` (line %d, its instance %lld) completes; "
            "happens-before guarantees only %lld",
         line_of(p, b->span), engine_name(s, c), b->op_name, engine_name(s, e), a->op_name,
         line_of(p, a->span), (long long)need, (long long)s->in[c].clock[e]);
}

/* The IR op's operands evaluated in its engine, hashed like the walk's. */
static uint64_t ir_operand_hash(Schedule *s, Interp *in, const IrNode *node) {
  uint64_t where = 0;
  for (int i = 0; i < node->noperands; i++) {
    const IrOperand *op = &node->operands[i];
    if (op->kind == OPND_IMM) continue;
    int64_t at[2] = {0, 0};
    if (op->kind == OPND_TILE) {
      at[0] = ir_eval(s, in, op->slot);
      if (op->v) at[1] = ir_eval(s, in, op->v->lo[0]) * s->o->p->kernel->tiles[op->decl].cols + ir_eval(s, in, op->v->lo[1]);
    } else if (op->v && !op->gather) { /* a gather: its index run's first element, below */
      at[0] = ir_eval(s, in, op->v->lo[0]);
      at[1] = ir_eval(s, in, op->v->lo[1]);
    } else {
      at[0] = ir_eval(s, in, op->row);
      at[1] = ir_eval(s, in, op->col);
    }
    where = operand_hash(where, op->decl, at);
  }
  return where;
}

/* Engine c's next instance in the walk, walking on as far as it takes; the
 * queue is empty past c's last instance. */
static Queue *next_instance(Schedule *s, int c) {
  Queue *q = &s->walk.queue[c];
  while (!q->len && walk_next(s->o, &s->walk)) {}
  if (s->o->failed) bug("oracle: a walk failed after the first succeeded");
  return q;
}

static void exec_op(Schedule *s, int c, const IrNode *node) {
  Interp *in = &s->in[c];
  Queue *q = next_instance(s, c);
  const Stmt *want = q->len ? q->instr[q->head] : NULL;
  int64_t k = s->pos[c] + 1;
  if (want == node->instr && q->where[q->head] != ir_operand_hash(s, in, node)) {
    s->st->mismatches++;
    s->stop = true;
    report(s, "%d: internal error: transform stream mismatch: op %lld of %s, `%s`, has operands "
              "that point elsewhere than the sequential walk's",
           node->line, (long long)k, engine_name(s, c), node->instr->op_name);
    return;
  }
  if (want != node->instr) {
    s->st->mismatches++;
    s->stop = true;
    report(s, "%d: internal error: transform stream mismatch: op %lld of %s is `%s`, the sequential "
              "walk has %s%s (line %d)",
           node->line, (long long)k, engine_name(s, c), node->instr->op_name, want ? "`" : "",
           want ? want->op_name : "nothing", want ? line_of(s->o->p, want->span) : 0);
    return;
  }
  const int64_t *need = q->need + q->head * s->n;
  read_counters(s, c);
  in->held = false;
  judge_pending(s, c, need);
  for (int e = 0; e < s->n; e++) {
    if (e == c || in->clock[e] >= need[e]) continue;
    s->st->races++;
    report_race(s, c, node->instr, e, need[e]);
  }
  s->pos[c] = k;
  s->counter[c]++;
  in->clock[c] = k;
  dequeue(q);
  keep_clock(s, c, k);
  capture_for_waiters(s, c, k);
  s->st->instructions++;
  s->st->engine_instructions[c]++;
}

static void enter_loop(Schedule *s, int c, const IrNode *loop) {
  Interp *in = &s->in[c];
  int64_t lo = ir_eval(s, in, loop->lo), hi = ir_eval(s, in, loop->hi);
  if (s->stop || lo >= hi) return;
  in->loopvars[loop->loop_id] = lo;
  in->frames[in->depth++] = (Frame){loop->body, loop, hi};
}

/* The branch taken runs as a body of its own (a frame with no loop). */
static void enter_if(Schedule *s, int c, const IrNode *n) {
  Interp *in = &s->in[c];
  const IrNode *branch = ir_eval(s, in, n->cond) ? n->body : n->orelse;
  if (s->stop || !branch) return;
  in->frames[in->depth++] = (Frame){branch, NULL, 0};
}

/* Advance engine c by one node. */
static void step(Schedule *s, int c) {
  Interp *in = &s->in[c];
  if (in->status == WAITING) {
    finish_wait(s, c);
    settle(in);
    return;
  }
  Frame *top = &in->frames[in->depth - 1];
  const IrNode *node = top->next;
  top->next = node->next;
  switch (node->kind) {
  case IR_OP: exec_op(s, c, node); break;
  case IR_WAIT: exec_wait(s, c, node); break;
  case IR_SET:
    in->vars[node->var] = ir_eval(s, in, node->value);
    s->st->bookkeeping++;
    s->st->engine_bookkeeping[c]++;
    break;
  case IR_STORE: {
    if (node->index->kind == IX_ROWS) {
      ir_rows_eval(s, in, node->index, node->array, true, ir_eval(s, in, node->value));
      s->st->bookkeeping++;
      s->st->engine_bookkeeping[c]++;
      break;
    }
    int64_t i = ir_eval(s, in, node->index), v = ir_eval(s, in, node->value);
    if (i < 0 || i >= in->array_len[node->array])
      bug("oracle: line %d: store to bookkeeping array %d at %lld out of range", node->line,
          node->array, (long long)i);
    in->arrays[node->array][i] = v;
    s->st->bookkeeping++;
    s->st->engine_bookkeeping[c]++;
    break;
  }
  case IR_LOOP: enter_loop(s, c, node); break;
  case IR_IF: enter_if(s, c, node); break;
  case IR_BARRIER:
    in->status = AT_BARRIER;
    in->waiting = node;
    break;
  }
  settle(in);
}

/* Whether c can take a step; an op held by back-pressure cannot (counted
 * once per op). */
static bool runnable(Schedule *s, int c) {
  Interp *in = &s->in[c];
  switch (in->status) {
  case RUNNING:
    if (in->depth == 0) return false;
    if (in->frames[in->depth - 1].next->kind != IR_OP || !s->consumers[c] || !hold(s, c)) return true;
    s->st->held += !in->held;
    in->held = true;
    return false;
  case WAITING: return s->counter[in->waiting->engine] >= in->wait_threshold;
  case AT_BARRIER: return false;
  }
  return false;
}

/* When every engine is at a barrier: all clocks join, counters restart. */
static bool release_barrier(Schedule *s) {
  for (int c = 0; c < s->n; c++)
    if (s->in[c].status != AT_BARRIER) return false;
  int64_t all[BFRT_MAX_ENGINES] = {0};
  for (int c = 0; c < s->n; c++) join(all, s->in[c].clock, s->n);
  for (int c = 0; c < s->n; c++) {
    Interp *in = &s->in[c];
    memcpy(in->clock, all, sizeof all);
    memset(in->known, 0, sizeof in->known);
    in->status = RUNNING;
    in->changed = true;
    s->base[c] = s->pos[c];
    s->counter[c] = 0;
  }
  memset(s->seen, 0, sizeof s->seen);
  return true;
}

static void report_deadlock(Schedule *s) {
  s->st->deadlocks++;
  for (int c = 0; c < s->n; c++) {
    const Interp *in = &s->in[c];
    if (in->status == WAITING) {
      int e = in->waiting->engine;
      report(s, "%d: deadlock: %s waits for S_%s >= %lld; S_%s is %lld and %s is %s",
             in->waiting->line, engine_name(s, c), engine_name(s, e), (long long)in->wait_threshold,
             engine_name(s, e), (long long)s->counter[e], engine_name(s, e),
             done(&s->in[e]) ? "finished" : "blocked");
    } else if (in->status == AT_BARRIER) {
      report(s, "%d: deadlock: %s waits at a barrier that not every engine reaches",
             in->waiting->line, engine_name(s, c));
    } else if (in->held) {
      report(s, "%d: deadlock: %s is held by back-pressure", in->frames[in->depth - 1].next->line,
             engine_name(s, c));
    }
  }
}

static void init_interp(Schedule *s, int c) {
  Arena *arena = s->o->p->arena;
  const IrStream *st = &s->ir->streams[c];
  Interp *in = &s->in[c];
  in->frames = ARENA_ARRAY(arena, Frame, s->waits->max_depth[c] + 1);
  in->loopvars = ARENA_ARRAY(arena, int64_t, s->o->p->kernel->nloops + 1);
  in->vars = ARENA_ARRAY(arena, int64_t, st->nvars + 1);
  in->arrays = ARENA_ARRAY(arena, int64_t *, st->narrays + 1);
  in->array_len = ARENA_ARRAY(arena, int64_t, st->narrays + 1);
  for (int a = 0; a < st->narrays; a++) {
    int64_t len = ir_eval(s, in, st->arrays[a].length);
    if (len < 0 || len > MAX_CELLS) bug("oracle: bookkeeping array '%s' of length %lld", st->arrays[a].name, (long long)len);
    in->array_len[a] = len;
    in->arrays[a] = ARENA_ARRAY(arena, int64_t, len + 1);
  }
  in->frames[0] = (Frame){st->body, NULL, 0};
  in->depth = 1;
  settle(in);
}

/* Every engine must have run exactly the walk's instances. */
static void check_complete(Schedule *s) {
  for (int c = 0; c < s->n; c++) {
    judge_pending(s, c, NULL);
    if (s->pos[c] == s->o->total[c]) continue;
    s->st->mismatches++;
    report(s, " internal error: transform stream mismatch: %s ran %lld ops, the sequential walk has %lld",
           engine_name(s, c), (long long)s->pos[c], (long long)s->o->total[c]);
  }
}

static void run_streams(Schedule *s) {
  for (int c = 0; c < s->n; c++)
    for (int e = 0; e < s->n; e++)
      if (e != c && (ir_tracks(&s->ir->streams[c]) >> e & 1)) s->consumers[e] |= UINT32_C(1) << c;
  for (int c = 0; c < s->n && !s->stop; c++) init_interp(s, c);
  while (!s->stop) {
    release_barrier(s);
    int ready[BFRT_MAX_ENGINES], nready = 0, ndone = 0;
    for (int c = 0; c < s->n; c++) {
      if (runnable(s, c)) ready[nready++] = c;
      ndone += done(&s->in[c]);
    }
    if (nready == 0) {
      if (ndone == s->n)
        check_complete(s);
      else
        report_deadlock(s);
      return;
    }
    step(s, ready[splitmix64_next(&s->rng) % (uint64_t)nready]);
  }
}

static void run_schedule(Schedule *s) {
  walk_start(s->o, &s->walk, WALK_NEEDS);
  run_streams(s);
  walk_finish(s->o, &s->walk);
  for (int e = 0; e < s->n; e++) history_free(&s->history[e]);
}

static void index_waits(Arena *arena, WaitIndex *w, const IrNode *node, int engine, int depth) {
  if (depth > w->max_depth[engine]) w->max_depth[engine] = depth;
  for (; node; node = node->next) {
    if (node->kind == IR_LOOP || node->kind == IR_IF) index_waits(arena, w, node->body, engine, depth + 1);
    if (node->kind == IR_IF) index_waits(arena, w, node->orelse, engine, depth + 1);
    if (node->kind != IR_WAIT) continue;
    w->waits_on[engine][node->engine] = true;
    if (w->n == w->cap) {
      w->cap = w->cap ? w->cap * 2 : 64;
      w->entries = grow(arena, w->entries, w->n, w->cap, sizeof *w->entries);
    }
    w->entries[w->n] = (WaitEntry){node, w->n};
    w->n++;
  }
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const WaitEntry *)a)->node, y = (uintptr_t)((const WaitEntry *)b)->node;
  return (x > y) - (x < y);
}

static WaitIndex *build_wait_index(const Oracle *o) {
  Arena *arena = o->p->arena;
  WaitIndex *w = ARENA_NEW(arena, WaitIndex);
  for (int c = 0; c < o->nengines; c++) index_waits(arena, w, o->p->ir->streams[c].body, c, 1);
  if (w->n) qsort(w->entries, (size_t)w->n, sizeof *w->entries, by_address);
  return w;
}

static void merge(OracleStats *total, const OracleStats *one) {
  if (one->races > total->races) total->races = one->races;
  if (one->mismatches > total->mismatches) total->mismatches = one->mismatches;
  if (one->window > total->window) total->window = one->window;
  if (one->held > total->held) total->held = one->held;
  total->deadlocks += one->deadlocks;
}

void oracle_check(Oracle *o, int schedules, uint64_t seed, FILE *log, OracleStats *st) {
  const IrProgram *ir = o->p->ir;
  if (!ir || ir->nengines != o->nengines) bug("oracle_check: no IR, or not for this target");
  Arena *arena = o->p->arena;
  const WaitIndex *w = build_wait_index(o);
  const IrNode **nodes = ARENA_ARRAY(arena, const IrNode *, w->n + 1);
  for (int i = 0; i < w->n; i++) nodes[w->entries[i].order] = w->entries[i].node;
  memset(st, 0, sizeof *st);
  st->schedules = schedules;
  st->sync = ir->sync;
  st->nwait_nodes = w->n;
  for (int k = 0; k < schedules; k++) {
    OracleStats one = {.nwait_nodes = w->n, .wait_node = nodes};
    one.wait_executed = ARENA_ARRAY(arena, int64_t, w->n + 1);
    one.wait_redundant = ARENA_ARRAY(arena, int64_t, w->n + 1);
    one.wait_subsumed = ARENA_ARRAY(arena, int64_t, w->n + 1);
    Schedule *s = ARENA_NEW(arena, Schedule);
    *s = (Schedule){.o = o, .ir = ir, .waits = w, .n = o->nengines, .st = &one,
                    .log = oracle_failed(st) ? NULL : log, .rng = seed ^ ((uint64_t)k << 32)};
    run_schedule(s);
    for (int e = 0; e < o->nengines; e++) one.backpressure_pairs += __builtin_popcount(s->consumers[e]);
    if (k == 0) {
      *st = one;
      st->schedules = schedules;
      st->sync = ir->sync;
    } else {
      merge(st, &one);
    }
  }
}

int oracle_failed(const OracleStats *st) {
  bool late = (st->sync == SYNC_BARRIER_FREE || st->sync == SYNC_UNROLLED) && st->late > 0;
  return st->races > 0 || late || st->deadlocks > 0 || st->mismatches > 0 || st->window > 0;
}

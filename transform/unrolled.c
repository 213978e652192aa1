/* unrolled.c: the paper's third baseline, every loop fully unrolled.
 *
 * With the parameters (and the device integers) of one run known, the
 * kernel is a straight line: this pass walks it in program order as the
 * reference executor does, evaluating every loop bound, condition, slot
 * and hbm coordinate, and gives each engine one IR_OP per dynamic
 * instruction with constant operands. Every wait is then static: before
 * an instance b on engine c, for every other engine e, the position of the
 * latest e-instance that precedes b and conflicts with it, need_e(b)
 * itself. The walk keeps, per memory cell and engine, the positions of the
 * last write and the last read (tiles per slot; an hbm tensor per cell of
 * the grid whose cell is the gcd of the tile shapes that access it, the
 * oracle's grid, so that overlapping regions share cells and disjoint ones
 * none). A wait is left out when c already knows the instance complete:
 * through its own earlier waits, or transitively, since an instance c
 * waited for started only after what its own engine knew complete then
 * (a vector clock per engine, kept per instance), or through another of
 * the waits before the same instance. No loop, no bookkeeping, no barrier: the
 * streams are what a compiler emits when trip counts are compile-time
 * constants, and their size grows with the run (MAX_UNROLLED_STEPS bounds
 * it).
 *
 * The code is valid only for the values it was unrolled with: bfsync run
 * and verify unroll for the run's parameters and i32 tensors (their
 * defaults for --seed, or --input), and compile needs -p (and takes the
 * default device integers, seed 1). A run-time error of the kernel (a slot
 * out of range, a division by zero) stops the unrolling with that error at
 * the instruction, since the unrolled program cannot run past it either. */
#include <inttypes.h>
#include <string.h>

#include "util/numbers.h"
#include "frontend/program.h"
#include "transform/deps.h"
#include "transform/sync.h"

/* The most instructions and loop iterations one unrolled kernel may run:
 * each becomes IR nodes and C text (about 100 bytes an instruction). */
enum { MAX_UNROLLED_STEPS = 500000 };
/* The most (cell, engine) entries of the walk's last-access tables. */
#define MAX_UNROLLED_CELLS ((int64_t)1 << 24)

typedef struct NodeList {
  IrNode *head, **tail;
} NodeList;

/* One tile or hbm tensor: its cells and, per engine that accesses it, the
 * positions of that engine's last write and last read of each cell. */
typedef struct Resource {
  int64_t ncells;
  int64_t cell_rows, cell_cols, grid_cols; /* hbm: the grid */
  int nengines;
  int index[BFRT_MAX_ENGINES]; /* engine -> column in the tables, or -1 */
  int64_t *last_write, *last_read; /* [cell * nengines + column] */
} Resource;

typedef struct Unroller {
  Program *p;
  const Deps *d;
  EvalEnv env;
  int64_t *loopvars;
  Resource *res;
  int64_t steps, cells;
  int64_t pos[BFRT_MAX_ENGINES]; /* instances issued per engine */
  /* known[c][e]: how many of e's instances c knows complete when it issues
   * its next one (its waits, and what the instances it waited for knew) */
  int64_t known[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES];
  /* history[e][(p - 1) * ne + f]: known[e][f] when e issued its p-th instance */
  int64_t *history[BFRT_MAX_ENGINES];
  int *instr_at[BFRT_MAX_ENGINES]; /* [e][p - 1]: the instruction of e's p-th instance */
  int64_t history_cap[BFRT_MAX_ENGINES];
  NodeList outs[BFRT_MAX_ENGINES];
} Unroller;

static void append(NodeList *l, IrNode *n) {
  *l->tail = n;
  l->tail = &n->next;
}

static int fail(Unroller *u, Span span, const char *message) {
  diag_error(&u->p->diag, span, "cannot unroll: %s", message);
  return -1;
}

static int eval_failed(Unroller *u, int status, const Expr *bad, Span span) {
  Span at = bad ? bad->span : span;
  if (status == EVAL_DIV_ZERO) return fail(u, at, "division by zero");
  return fail(u, at,
              arena_printf(u->p->arena, "element [%" PRId64 ", %" PRId64 "] is outside its tensor",
                           u->env.bad_at[0], u->env.bad_at[1]));
}

static int eval(Unroller *u, const Expr *e, Span span, int64_t *out) {
  const Expr *bad = NULL;
  int status = expr_eval_in(e, &u->env, out, &bad);
  return status ? eval_failed(u, status, bad, span) : 0;
}

static int step(Unroller *u, Span span) {
  if (++u->steps <= MAX_UNROLLED_STEPS && u->steps <= u->p->max_steps) return 0;
  return fail(u, span,
              arena_printf(u->p->arena,
                           "with these parameters the kernel runs more than %d instructions and loop "
                           "iterations, the most --sync=unrolled unrolls (MAX_UNROLLED_STEPS)",
                           u->steps > u->p->max_steps && u->p->max_steps < MAX_UNROLLED_STEPS
                               ? (int)u->p->max_steps
                               : MAX_UNROLLED_STEPS));
}

/* ---- The resources and their cells. */

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Requires: deps. Ensures: every resource's tables, or an error. */
static int plan_resources(Unroller *u) {
  const Deps *d = u->d;
  const Kernel *k = u->p->kernel;
  u->res = ARENA_ARRAY(u->p->arena, Resource, d->nres + 1);
  for (int r = 0; r < d->nres; r++) {
    Resource *rs = &u->res[r];
    for (int e = 0; e < d->nengines; e++) {
      const AccessorList *l = deps_accessors(d, r, e);
      rs->index[e] = l->n ? rs->nengines++ : -1;
    }
    if (!rs->nengines) continue;
    if (r < k->ntiles) {
      rs->ncells = k->tiles[r].slots;
    } else {
      int t = r - k->ntiles;
      for (int e = 0; e < d->nengines; e++) {
        const AccessorList *l = deps_accessors(d, r, e);
        for (int i = 0; i < l->n; i++) {
          const InstrInfo *in = &d->instrs[l->ids[i]];
          for (int j = 0; j < in->naccesses; j++)
            if (in->accesses[j].res == r) {
              rs->cell_rows = gcd_i64(rs->cell_rows, in->accesses[j].rows);
              rs->cell_cols = gcd_i64(rs->cell_cols, in->accesses[j].cols);
            }
        }
      }
      int64_t rows, cols;
      if (eval(u, k->tensors[t].rows, k->tensors[t].span, &rows) ||
          eval(u, k->tensors[t].cols, k->tensors[t].span, &cols))
        return -1;
      rs->grid_cols = ceil_div(cols > 0 ? cols : 0, rs->cell_cols);
      int64_t grid_rows = ceil_div(rows > 0 ? rows : 0, rs->cell_rows);
      if (rs->grid_cols && grid_rows > MAX_UNROLLED_CELLS / rs->grid_cols)
        return fail(u, k->tensors[t].span,
                    arena_printf(u->p->arena, "tensor %s has more than %" PRId64 " cells to track",
                                 k->tensors[t].name, MAX_UNROLLED_CELLS));
      rs->ncells = grid_rows * rs->grid_cols;
    }
    if (rs->ncells > (MAX_UNROLLED_CELLS - u->cells) / rs->nengines)
      return fail(u, k->span,
                  arena_printf(u->p->arena, "the kernel's memory has more than %" PRId64
                               " (cell, engine) pairs to track (MAX_UNROLLED_CELLS)", MAX_UNROLLED_CELLS));
    u->cells += rs->ncells * rs->nengines;
    rs->last_write = ARENA_ARRAY(u->p->arena, int64_t, rs->ncells * rs->nengines + 1);
    rs->last_read = ARENA_ARRAY(u->p->arena, int64_t, rs->ncells * rs->nengines + 1);
  }
  return 0;
}

/* The cells access a covers, given its operand's evaluated slot or
 * coordinates: [*first, *first + *height) rows of the grid, each of *width
 * cells from *first. */
typedef struct CellRange {
  int64_t first, height, width, stride;
} CellRange;

static int64_t range_cell(const CellRange *c, int64_t i) {
  return c->first + (i / c->width) * c->stride + i % c->width;
}

/* ---- The walk. */

typedef struct Evaluated {
  int64_t slot, row, col;
} Evaluated;

static int span_fits(int64_t idx, int64_t size, int64_t extent) {
  return idx >= 0 && idx <= (INT64_MAX - size) / size && idx * size + size <= extent;
}

/* Operand o of s, evaluated and checked as the reference checks it. */
static int eval_operand(Unroller *u, const Stmt *s, const Operand *o, const Access *a, Evaluated *v) {
  const Kernel *k = u->p->kernel;
  if (o->view) /* regions of views and slices are deps.c's and the oracle's, not yet this pass's */
    return fail(u, o->span, "views and element slices are not unrolled yet (docs/algorithm.md, 5.2)");
  if (o->kind == OPND_TILE) {
    const Tile *t = &k->tiles[o->decl];
    v->slot = 0;
    if (o->slot && eval(u, o->slot, o->span, &v->slot)) return -1;
    if (v->slot < 0 || v->slot >= t->slots)
      return fail(u, o->span,
                  arena_printf(u->p->arena, "slot %s[%" PRId64 "] is out of range (%" PRId64 " slots)",
                               t->name, v->slot, t->slots));
    return 0;
  }
  if (eval(u, o->row, o->span, &v->row) || eval(u, o->col, o->span, &v->col)) return -1;
  int64_t rows, cols;
  if (eval(u, k->tensors[o->decl].rows, o->span, &rows) || eval(u, k->tensors[o->decl].cols, o->span, &cols))
    return -1;
  if (!span_fits(v->row, a->rows, rows) || !span_fits(v->col, a->cols, cols))
    return fail(u, o->span,
                arena_printf(u->p->arena, "%s %s[%" PRId64 ", %" PRId64 "] is out of bounds",
                             s->op_name, k->tensors[o->decl].name, v->row, v->col));
  (void)s;
  return 0;
}

static CellRange cells_of(const Unroller *u, const Access *a, const Evaluated *v) {
  const Resource *rs = &u->res[a->res];
  if (a->res < u->p->kernel->ntiles) return (CellRange){v->slot, 1, 1, 1};
  int64_t r0 = v->row * a->rows / rs->cell_rows, c0 = v->col * a->cols / rs->cell_cols;
  return (CellRange){r0 * rs->grid_cols + c0, a->rows / rs->cell_rows, a->cols / rs->cell_cols, rs->grid_cols};
}

static IrExpr *constant(Unroller *u, int64_t v) { return ir_const(u->p->arena, v); }

/* The IR_OP of instance s with its operands as constants. */
static IrNode *op_node(Unroller *u, const Stmt *s, const Evaluated *v, int line) {
  IrNode *n = ir_node(u->p->arena, IR_OP, line);
  n->instr = s;
  n->op = s->op;
  n->noperands = s->noperands;
  n->operands = ARENA_ARRAY(u->p->arena, IrOperand, s->noperands);
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    IrOperand *io = &n->operands[i];
    io->kind = o->kind;
    io->decl = o->decl;
    io->imm = o->imm;
    if (o->kind == OPND_TILE) io->slot = constant(u, v[i].slot);
    if (o->kind == OPND_HBM) {
      io->row = constant(u, v[i].row);
      io->col = constant(u, v[i].col);
    }
  }
  return n;
}

static IrNode *wait_node(Unroller *u, const InstrInfo *in, int e, int64_t threshold, int kinds) {
  IrNode *w = ir_node(u->p->arena, IR_WAIT, in->line);
  WaitWhy *why = ARENA_NEW(u->p->arena, WaitWhy);
  why->consumer_line = in->line;
  why->producer_lines[0] = u->d->instrs[u->instr_at[e][threshold - 1]].line;
  why->nproducers = 1;
  why->kind = deps_kind_name(kinds & 1, kinds & 2, kinds & 4);
  why->distance = "static";
  w->engine = e;
  w->threshold = constant(u, threshold);
  w->why = why;
  return w;
}

/* Keep what c knows as it issues its pos-th instance, for the engines
 * that will wait for that instance. */
static void remember(Unroller *u, int c, int64_t pos, int instr) {
  int ne = u->d->nengines;
  if (pos > u->history_cap[c]) {
    int64_t cap = u->history_cap[c] ? 2 * u->history_cap[c] : 256;
    int64_t *h = ARENA_ARRAY(u->p->arena, int64_t, cap * ne);
    int *at = ARENA_ARRAY(u->p->arena, int, cap);
    if (u->history_cap[c]) {
      memcpy(h, u->history[c], sizeof(int64_t) * (size_t)(u->history_cap[c] * ne));
      memcpy(at, u->instr_at[c], sizeof(int) * (size_t)u->history_cap[c]);
    }
    u->history[c] = h;
    u->instr_at[c] = at;
    u->history_cap[c] = cap;
  }
  memcpy(&u->history[c][(pos - 1) * ne], u->known[c], sizeof(int64_t) * (size_t)ne);
  u->instr_at[c][pos - 1] = instr;
}

/* Whether another wait c needs before this instance shows need[e]
 * complete: the instance it waits for started after e's reached need[e]. */
static bool implied_by_other(const Unroller *u, int c, int e, const int64_t *need) {
  int ne = u->d->nengines;
  for (int f = 0; f < ne; f++)
    if (f != c && f != e && need[f] > u->known[c][f] && u->history[f][(need[f] - 1) * ne + e] >= need[e]) return true;
  return false;
}

/* One dynamic instance: its waits (need_e from the tables), its op, then
 * its own accesses recorded at its position. */
static int instance(Unroller *u, const Stmt *s) {
  if (step(u, s->span)) return -1;
  const InstrInfo *in = &u->d->instrs[s->instr_id];
  Evaluated v[IR_MAX_OPERANDS] = {{0}};
  for (int j = 0; j < in->naccesses; j++) {
    const Access *a = &in->accesses[j];
    int i = (int)(a->operand - s->operands);
    if (eval_operand(u, s, a->operand, a, &v[i])) return -1;
  }
  int c = in->engine, ne = u->d->nengines;
  int64_t need[BFRT_MAX_ENGINES] = {0};
  int kinds[BFRT_MAX_ENGINES] = {0}; /* bits: 1 RAW, 2 WAR, 4 WAW */
  for (int j = 0; j < in->naccesses; j++) {
    const Access *a = &in->accesses[j];
    const Resource *rs = &u->res[a->res];
    CellRange cr = cells_of(u, a, &v[a->operand - s->operands]);
    for (int64_t i = 0; i < cr.height * cr.width; i++) {
      int64_t cell = range_cell(&cr, i) * rs->nengines;
      for (int e = 0; e < ne; e++) {
        int col = rs->index[e];
        if (e == c || col < 0) continue;
        int64_t w = rs->last_write[cell + col], r = a->write ? rs->last_read[cell + col] : 0;
        if (w > need[e]) need[e] = w;
        if (r > need[e]) need[e] = r;
        kinds[e] |= (w ? (a->write ? 4 : 1) : 0) | (r ? 2 : 0);
      }
    }
  }
  for (int e = 0; e < ne; e++) {
    if (e == c || need[e] <= u->known[c][e] || implied_by_other(u, c, e, need)) continue;
    append(&u->outs[c], wait_node(u, in, e, need[e], kinds[e]));
    const int64_t *then = &u->history[e][(need[e] - 1) * ne];
    for (int f = 0; f < ne; f++)
      if (then[f] > u->known[c][f]) u->known[c][f] = then[f];
  }
  append(&u->outs[c], op_node(u, s, v, in->line));
  int64_t pos = ++u->pos[c];
  u->known[c][c] = pos;
  remember(u, c, pos, s->instr_id);
  for (int j = 0; j < in->naccesses; j++) {
    const Access *a = &in->accesses[j];
    const Resource *rs = &u->res[a->res];
    CellRange cr = cells_of(u, a, &v[a->operand - s->operands]);
    int64_t *table = a->write ? rs->last_write : rs->last_read;
    for (int64_t i = 0; i < cr.height * cr.width; i++) table[range_cell(&cr, i) * rs->nengines + rs->index[c]] = pos;
  }
  return 0;
}

static int walk(Unroller *u, const Stmt *s);

static int walk_for(Unroller *u, const Stmt *s) {
  int64_t lo, hi;
  if (eval(u, s->lo, s->span, &lo) || eval(u, s->hi, s->span, &hi)) return -1;
  uint64_t trips = ir_trips(lo, hi);
  for (uint64_t t = 0; t < trips; t++) {
    if (step(u, s->span)) return -1;
    u->loopvars[s->loop_id] = (int64_t)((uint64_t)lo + t);
    if (walk(u, s->body)) return -1;
  }
  return 0;
}

static int walk(Unroller *u, const Stmt *s) {
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR:
      if (instance(u, s)) return -1;
      break;
    case ST_BLOCK:
      if (walk(u, s->body)) return -1;
      break;
    case ST_FOR:
      if (walk_for(u, s)) return -1;
      break;
    case ST_IF: {
      bool taken;
      const Expr *bad = NULL;
      int status = cond_eval(s->cond, &u->env, &taken, &bad);
      if (status) return eval_failed(u, status, bad, s->span);
      if (walk(u, taken ? s->body : s->orelse)) return -1;
      break;
    }
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    }
  }
  return 0;
}

static bool reads_device_ints(const Kernel *k) {
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].ints) return true;
  return false;
}

/* Requires: a checked kernel, p->params bound when it has parameters and
 * p->device_ints when it has i32 tensors. Ensures: p->ir with straight-line
 * streams (IR_OP and IR_WAIT only) whose every threshold is a constant,
 * need_e of its instance; or an error (the kernel's own run-time error, or
 * a size beyond MAX_UNROLLED_STEPS or MAX_UNROLLED_CELLS). */
void transform_unrolled(Program *p) {
  const Kernel *k = p->kernel;
  if (k->nparams && !p->params) {
    diag_error(&p->diag, k->span, "--sync=unrolled needs the parameters' values (-p NAME=VALUE)");
    return;
  }
  if (reads_device_ints(k) && !p->device_ints) {
    diag_error(&p->diag, k->span, "--sync=unrolled needs the values of the kernel's i32 tensors");
    return;
  }
  Unroller *u = ARENA_NEW(p->arena, Unroller);
  u->p = p;
  u->d = deps_build(p);
  u->loopvars = ARENA_ARRAY(p->arena, int64_t, k->nloops + 1);
  u->env = (EvalEnv){p->params, u->loopvars, p->device_ints, p->device_shape, {0, 0}};
  for (int e = 0; e < u->d->nengines; e++) u->outs[e] = (NodeList){NULL, &u->outs[e].head};
  p->ir = ARENA_NEW(p->arena, IrProgram);
  p->ir->sync = SYNC_UNROLLED;
  p->ir->nengines = u->d->nengines;
  if (plan_resources(u) || walk(u, k->body)) return;
  for (int e = 0; e < u->d->nengines; e++) p->ir->streams[e].body = u->outs[e].head;
}

/* reference_f64.c: the independent numerical reference.
 *
 * The sequential reference (reference.c) runs the same op code as the
 * engines (runtime/semantics.c), so a match with it proves the
 * synchronization, not the arithmetic: a kernel that computes nonsense the
 * same way twice matches. This file is the second opinion. It walks the
 * checked AST in program order like reference.c, but every value is a
 * double, every op is written out again here from its definition in
 * docs/language.md, in the plainest loops, and nothing is shared with the
 * runtime but the op numbering. Beside each exact value it keeps a bound on
 * how far an f32 computation may be from it (see "The ops" below), and
 * `bfsync run` fails when an engine's result is over its bound
 * (reference_f64_compare: error_bound_ratio_f64 > 1; max_abs_err_f64 and
 * max_rel_err_f64 are reported too).
 *
 * Because it sees every value the kernel computes, it is also where the
 * numerical diagnostics live, each stopping the run with the source line:
 *   - a tile element read before anything wrote it (on hardware, SBUF and
 *     PSUM hold whatever the last kernel left there; bfsync zeroes them,
 *     which would hide the bug);
 *   - an op that turns finite inputs into NaN or Inf, or into a value too
 *     large for f32 (which the engines would round to Inf), judged per
 *     element on the inputs that element depends on, so an Inf elsewhere
 *     in a tile excuses nothing;
 *   - elements of an out tensor that no store ever wrote (they would be
 *     whatever the host's buffer held).
 * Immediates are the decimal values as written (o->imm_value), not their
 * f32 roundings, so the reference sees the kernel the writer meant.
 *
 * Tiles and tensors of a narrower storage type (bf16, fp16, fp8e4, fp8e5) keep their
 * exact values here too: a store to one adds the rounding the engines make
 * there to the bound instead (see "Storage types" below; none when the op
 * only moves or compares values the type already holds), and an overflow
 * of the type (to Inf in bf16, fp16 and fp8e5, to NaN in fp8e4) is the same diagnostic as
 * an overflow of f32. Inputs of those types arrive already rounded (the
 * default inputs and .npy files are rounded as they are read), so they are
 * exact. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "runtime/ops.h"
#include "runtime/semantics.h"

/* An exact value and the bound on an f32 computation's distance from it. */
typedef struct Cell {
  double v, e;
} Cell;

/* A window of cells: rows x cols, stride between rows. */
typedef struct View {
  Cell *data;
  int64_t rows, cols, stride;
  int64_t cstride; /* between columns: a strided hbm slice's step (0: 1) */
} View;

typedef struct F64 {
  Program *p;
  const int64_t *params;
  int64_t *loopvars;   /* by loop id */
  Cell **tensors;      /* by tensor */
  int64_t (*shapes)[2];
  bool **stored;       /* by tensor: which elements a store wrote */
  Cell **tiles;        /* by tile: slots * rows * cols */
  bool **written;      /* by tile: which elements (slots * rows * cols) an op wrote */
  Cell *result;        /* an op's result before it is stored: as large as the largest tile */
  int64_t result_cells;
  const char *err;
} F64;

static Cell *at(View v, int64_t i, int64_t j) { return v.data + i * v.stride + j * (v.cstride ? v.cstride : 1); }
/* at, where a function's parameter named at hides it */
static Cell *at_cell(View v, int64_t i, int64_t j) { return at(v, i, j); }

static int fail(F64 *r, Span span, const char *message) {
  int line, col;
  source_position(&r->p->src, span.begin, &line, &col);
  r->err = arena_printf(r->p->arena, "kernel %s, line %d: %s", r->p->kernel->name, line, message);
  return -1;
}

/* Device integers come from p->device_ints, like the f32 reference's. */
static EvalEnv env_of(const F64 *r) {
  return (EvalEnv){r->params, r->loopvars, r->p->device_ints, r->p->device_shape, {0, 0}};
}

static int eval_failed(F64 *r, int status, const Expr *bad, Span span) {
  return fail(r, bad ? bad->span : span,
              status == EVAL_OUT_OF_RANGE ? "element of an i32 tensor out of bounds" : "division by zero");
}

static int eval(F64 *r, const Expr *e, int64_t *out) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  int status = expr_eval_in(e, &env, out, &bad);
  return status ? eval_failed(r, status, bad, e->span) : 0;
}

/* ---- Operands. */

/* Where a view or slice starts along dimension d, and how far it reaches:
 * its extent, or a ragged one's max(0, min(extent, E - lo)). */
static int view_extent(F64 *r, const Operand *o, int d, int64_t *lo, int64_t *n) {
  int64_t end;
  *lo = 0;
  *n = o->ext[d];
  if (o->lo[d] && eval(r, o->lo[d], lo)) return -1;
  if (!o->clip[d]) return 0;
  if (eval(r, o->clip[d], &end)) return -1;
  int64_t left = (int64_t)((uint64_t)end - (uint64_t)*lo);
  *n = left < 0 ? 0 : left < *n ? left : *n;
  return 0;
}

typedef struct Operands {
  View v[BFRT_MAX_OPERANDS];
  Cell imm;  /* the exact immediate (the last one); its bound is its rounding to f32 */
  Cell imms[BFRT_MAX_OPERANDS]; /* each operand's immediate, likewise (a name: its code, exact) */
  int hbm;   /* which operand is an hbm tile, or -1 */
  int64_t slot[BFRT_MAX_OPERANDS]; /* a tile operand's first element among its tile's (tile_operand) */
} Operands;

/* A tile operand: its slot, or the part of it a view names (partitions
 * lo[0] .. lo[0] + ext[0] - 1, columns likewise). *at: its first element
 * among the tile's slots laid end to end. */
static int tile_operand(F64 *r, const Operand *o, View *v, int64_t *at) {
  const Tile *t = &r->p->kernel->tiles[o->decl];
  int64_t slot = 0, lo[2] = {0, 0}, n[2], size[2] = {t->rows, t->cols};
  if (o->slot && eval(r, o->slot, &slot)) return -1;
  if (slot < 0 || slot >= t->slots)
    return fail(r, o->span, arena_printf(r->p->arena, "slot %s[%" PRId64 "] is out of range", t->name, slot));
  int64_t step[2] = {o->view ? o->nd->nstep[0] : 1, o->view ? o->nd->nstep[1] : 1}, span[2];
  for (int d = 0; d < 2; d++) {
    if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
    span[d] = n[d] > 0 ? (n[d] - 1) * step[d] + 1 : n[d]; /* a strided view's reach, within its tile (sema) */
    if (lo[d] < 0 || lo[d] > size[d] - span[d])
      return fail(r, o->span, arena_printf(r->p->arena, "view %" PRId64 ":%" PRId64 " of tile %s is outside its %s 0:%" PRId64,
                                           lo[d], lo[d] + span[d], t->name, d ? "columns" : "partitions", size[d]));
  }
  *at = slot * t->rows * t->cols + lo[0] * t->cols + lo[1];
  *v = (View){r->tiles[o->decl] + *at, n[0], n[1], step[0] * t->cols, step[1]};
  return 0;
}

/* Row p of gather o, checked inside its tensor. */
static int gather_row(F64 *r, const Operand *o, int64_t p, int64_t *row) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  int status = gather_row_eval(o->gather, &env, p, row, &bad);
  if (status) return eval_failed(r, status, bad, o->span);
  if (*row >= 0 && *row < r->shapes[o->decl][0]) return 0;
  return fail(r, o->span, arena_printf(r->p->arena, "%s: index %s (partition %" PRId64 ") = %" PRId64 " is outside the tensor's rows 0:%" PRId64,
                                       r->p->kernel->tensors[o->decl].name, o->gather->name, p, *row, r->shapes[o->decl][0]));
}

static int hbm_operand(F64 *r, const Operand *o, View unit, View *v) {
  int64_t row, col, rows = r->shapes[o->decl][0], cols = r->shapes[o->decl][1];
  if (o->gather) { /* rows by index: each checked; *v is the first row's, run_instr moves it row by row */
    int64_t lo, n;
    if (view_extent(r, o, 1, &lo, &n)) return -1;
    if (n > cols || lo < 0 || lo > cols - n)
      return fail(r, o->span, arena_printf(r->p->arena, "%s: columns %" PRId64 ":%" PRId64 " are outside the tensor's 0:%" PRId64,
                                           r->p->kernel->tensors[o->decl].name, lo, lo + n, cols));
    for (int64_t p = 0; p < o->gather->n; p++)
      if (gather_row(r, o, p, &row)) return -1;
    *v = (View){r->tensors[o->decl] + lo, o->gather->n, n, cols, 0};
    return 0;
  }
  if (o->view) { /* an element slice */
    int64_t lo[2] = {0, 0}, n[2], size[2] = {rows, cols}, step[2] = {1, o->cstep > 1 ? o->cstep : 1};
    if (o->rstep && eval(r, o->rstep, &step[0])) return -1;
    for (int d = 0; d < 2; d++) {
      if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
      int64_t span = 0; /* (n - 1) * step + 1: the rows or columns its n indices reach */
      if (n[d] > 0 && (step[d] < 1 || __builtin_mul_overflow(n[d] - 1, step[d], &span) || span == INT64_MAX))
        return fail(r, o->span, arena_printf(r->p->arena, "%s: a slice of %" PRId64 " indices %" PRId64 " apart does not fit a tensor",
                                             r->p->kernel->tensors[o->decl].name, n[d], step[d]));
      if (n[d] > 0) span++;
      if (span > size[d] || lo[d] < 0 || lo[d] > size[d] - span)
        return fail(r, o->span, arena_printf(r->p->arena, "%s: %s %" PRId64 ":%" PRId64 " are outside the tensor's 0:%" PRId64,
                                             r->p->kernel->tensors[o->decl].name, d ? "columns" : "rows", lo[d],
                                             lo[d] <= INT64_MAX - span ? lo[d] + span : lo[d], size[d]));
    }
    *v = (View){r->tensors[o->decl] + lo[0] * cols + lo[1], n[0], n[1], step[0] * cols, step[1]};
    return 0;
  }
  if (eval(r, o->row, &row) || eval(r, o->col, &col)) return -1;
  if (row < 0 || col < 0 || unit.rows > rows || unit.cols > cols || row > (rows - unit.rows) / unit.rows ||
      col > (cols - unit.cols) / unit.cols)
    return fail(r, o->span, arena_printf(r->p->arena, "%s[%" PRId64 ", %" PRId64 "] is out of bounds",
                                         r->p->kernel->tensors[o->decl].name, row, col));
  *v = (View){r->tensors[o->decl] + row * unit.rows * cols + col * unit.cols, unit.rows, unit.cols, cols, 0};
  return 0;
}

static int resolve(F64 *r, const Stmt *s, Operands *ops) {
  memset(ops, 0, sizeof *ops);
  ops->hbm = -1;
  for (int i = 0; i < s->noperands && i < BFRT_MAX_OPERANDS; i++) {
    const Operand *o = &s->operands[i];
    if (o->kind == OPND_TILE && tile_operand(r, o, &ops->v[i], &ops->slot[i])) return -1;
    if (o->kind == OPND_HBM) ops->hbm = i;
    if (o->kind == OPND_IMM) ops->imm = ops->imms[i] = (Cell){o->imm_value, fabs(o->imm_value - (double)o->imm)};
  }
  if (ops->hbm >= 0 && hbm_operand(r, &s->operands[ops->hbm], ops->v[1 - ops->hbm], &ops->v[ops->hbm]))
    return -1;
  return 0;
}

/* ---- Storage types. Written out here from their definitions, not taken
 * from the runtime: a store to bf16 (8 significant bits), fp16 (11), fp8e4
 * (4) or fp8e5 (3) rounds
 * to nearest, so it moves a value by at most half an ulp: unit * |x| for a
 * normal x, and half the smallest subnormal below the normals. */
typedef struct StorageType {
  const char *name;
  double unit;     /* half an ulp, relative: 2^-p for p significant bits */
  double absolute; /* half the smallest subnormal */
  double largest;  /* the largest |x| that rounds to a finite value (ties go to even) */
  const char *overflow;
} StorageType;

static const StorageType *storage_type(ElemType type) {
  /* the largest: just below the midpoint past the largest finite value when
   * that value's last significand bit is 1 (the tie goes to the overflow),
   * the midpoint itself when it is 0 (fp8e4: 464 ties to 448) */
  static const StorageType types[ELEM_NTYPES] = {
      [ELEM_BF16] = {"bf16", 0x1p-8, 0x1p-134, 0x1.FEFFFFFFFFFFFp127, "Inf"},      /* 8 bits, to 0x1.FEp127 */
      [ELEM_FP8E4] = {"fp8e4", 0x1p-4, 0x1p-10, 464, "NaN"},                      /* 4 bits, to 448 */
      [ELEM_FP8E5] = {"fp8e5", 0x1p-3, 0x1p-17, 0x1.DFFFFFFFFFFFFp15, "Inf"},     /* 3 bits, to 57344 */
      [ELEM_FP16] = {"fp16", 0x1p-11, 0x1p-25, 0x1.FFDFFFFFFFFFFp15, "Inf"},      /* 11 bits, to 65504 */
  };
  return types[type].name ? &types[type] : NULL;
}

static ElemType operand_type(const F64 *r, const Operand *o) {
  const Kernel *k = r->p->kernel;
  return o->kind == OPND_TILE ? k->tiles[o->decl].type : k->tensors[o->decl].type;
}

/* Whether every value of type from is one of type to: f32 holds all of
 * them, and bf16 and fp16 both hold fp8e4 and fp8e5 (fewer significand
 * bits, a narrower exponent range; fp8e5 is fp16's upper byte), but not
 * each other, nor fp8e4 and fp8e5 each other. */
static bool holds_every(ElemType to, ElemType from) {
  bool from_fp8 = from == ELEM_FP8E4 || from == ELEM_FP8E5;
  return to == from || to == ELEM_F32 || ((to == ELEM_BF16 || to == ELEM_FP16) && from_fp8);
}

/* Whether s stores its values without rounding: an EXACT op (one that
 * moves, compares or negates values) whose sources are all of types the
 * destination holds, and no immediate, stores values of those types. */
static bool stores_exactly(const F64 *r, const Stmt *s, ElemType dst) {
  if (op_info(s->op)->accuracy != BFRT_ACC_EXACT) return false;
  for (int i = 1; i < s->noperands; i++)
    if (s->operands[i].kind == OPND_IMM || !holds_every(dst, operand_type(r, &s->operands[i]))) return false;
  return true;
}

/* The store's rounding, added to every bound of the destination. */
static void widen_for_storage(View d, const StorageType *st) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) {
      Cell *c = at(d, i, j);
      c->e += st->unit * (fabs(c->v) + c->e) + st->absolute;
    }
}

/* ---- Diagnostics. */

/* The first element of v (at `at` among tile t's) no op has written, or -1. */
static int64_t first_unwritten(const F64 *r, int t, int64_t at, View v) {
  const bool *w = r->written[t];
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++)
      if (!w[at + (at_cell(v, i, j) - v.data)]) return at + (at_cell(v, i, j) - v.data);
  return -1;
}

/* Every tile element the op reads must have been written. */
static int check_reads(F64 *r, const Stmt *s, const Operands *ops) {
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    bool reads = bfrt_op_reads(s->op, i);
    int64_t bad = o->kind == OPND_TILE && reads ? first_unwritten(r, o->decl, ops->slot[i], ops->v[i]) : -1;
    if (bad < 0) continue;
    const Tile *t = &r->p->kernel->tiles[o->decl];
    int64_t slot = bad / (t->rows * t->cols), elem = bad % (t->rows * t->cols);
    return fail(r, o->span,
                arena_printf(r->p->arena, "'%s' reads %s %s%s before anything wrote it%s", s->op_name,
                             t->mem == MEM_PSUM ? "psum tile" : "tile", t->name,
                             t->slotted ? arena_printf(r->p->arena, "[%" PRId64 "]", slot) : "",
                             o->view ? arena_printf(r->p->arena, " (its element [%" PRId64 ", %" PRId64 "])",
                                                    elem / t->cols, elem % t->cols)
                                     : ""));
  }
  return 0;
}

static void mark_written(F64 *r, int t, int64_t at, View v) {
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++) r->written[t][at + (at_cell(v, i, j) - v.data)] = true;
}

static bool finite_span(View v, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
  for (int64_t i = i0; i < i0 + rows; i++)
    for (int64_t j = j0; j < j0 + cols; j++)
      if (!isfinite(at(v, i, j)->v)) return false;
  return true;
}

static Cell second(int op, const Operands *o, int64_t i, int64_t j);

/* A [P, 1] operand's value for partition i is finite, or it is an immediate. */
static bool scalar_finite(const Operands *o, int k, int64_t i) { return !o->v[k].data || isfinite(at(o->v[k], i, 0)->v); }

/* element_inputs_finite for the nki.isa instructions: nc_matmul's column i
 * of the stationary and j of the moving operand (and the old value), the
 * reductions' and bn's row, a scan's row up to j and its initial, the
 * element (and the per-partition operands) of the others. */
static bool isa_inputs_finite(int op, const Operands *o, int64_t i, int64_t j) {
  View a = o->v[1];
  switch (op) {
  case BFRT_MEMSET: case BFRT_IOTA: return true;
  case BFRT_NC_MATMUL_ACC:
    if (!isfinite(at(o->v[0], i, j)->v)) return false;
    /* fall through */
  case BFRT_NC_MATMUL: return finite_span(a, 0, i, a.rows, 1) && finite_span(o->v[2], 0, j, o->v[2].rows, 1);
  case BFRT_NC_TRANSPOSE: return isfinite(at(a, j, i)->v);
  case BFRT_AFFINE_SELECT: return isfinite(at(o->v[4], i, j)->v);
  case BFRT_TENSOR_REDUCE: case BFRT_TENSOR_REDUCE_NEG: return finite_span(o->v[2], i, 0, 1, o->v[2].cols);
  case BFRT_BN_STATS: case BFRT_BN_AGGR: return finite_span(a, i, 0, 1, a.cols);
  case BFRT_TENSOR_TENSOR_SCAN: case BFRT_TENSOR_TENSOR_SCAN_V:
    return finite_span(a, i, 0, 1, j + 1) && finite_span(o->v[2], i, 0, 1, j + 1) && scalar_finite(o, 3, i);
  case BFRT_ACTIVATION: return isfinite(at(o->v[2], i, j)->v);
  case BFRT_ACTIVATION_BS: case BFRT_ACTIVATION_ACC: return isfinite(at(o->v[2], i, j)->v) && scalar_finite(o, 3, i);
  case BFRT_PERMUTE: {
    int64_t groups = (int64_t)o->imms[2].v;
    return isfinite(at(a, i, (j % groups) * (a.cols / groups) + j / groups)->v);
  }
  default: /* tensor_scalar */
    return isfinite(at(a, i, j)->v) && scalar_finite(o, 3, i) && (!o->v[5].data || scalar_finite(o, 5, i));
  }
}

/* Whether every input element result [i, j] of s depends on is finite:
 * its row and column for matmul (and the old value for matmul_acc), its
 * mirror for transpose, its row for a reduction, else the sources' element
 * at [i, j] or the row or column broadcast to it. Per element, so an Inf
 * elsewhere in a tile does not excuse an overflow here. */
static bool element_inputs_finite(const Stmt *s, const Operands *o, int64_t i, int64_t j) {
  View a = o->v[1];
  switch (s->op) {
  case BFRT_FILL: return true; /* sema keeps immediates finite */
  case BFRT_MATMUL_ACC:
    if (!isfinite(at(o->v[0], i, j)->v)) return false;
    /* fall through */
  case BFRT_MATMUL: return finite_span(a, i, 0, 1, a.cols) && finite_span(o->v[2], 0, j, o->v[2].rows, 1);
  case BFRT_TRANSPOSE: return isfinite(at(a, j, i)->v);
  case BFRT_ROWMAX: case BFRT_ROWSUM: case BFRT_ROWSUM_SQUARE: case BFRT_ROWSUM_EXP:
    return finite_span(a, i, 0, 1, a.cols);
  default:
    if (s->op >= BFRT_NC_MATMUL) return isa_inputs_finite(s->op, o, i, j);
    if (!isfinite(at(a, i, j)->v)) return false;
    return s->noperands < 3 || s->operands[2].kind == OPND_IMM || isfinite(second(s->op, o, i, j).v);
  }
}

/* Whether x rounds to a finite value of f32 and of st (if any). */
static bool fits(double x, const StorageType *st) {
  return fabs(x) <= F32_LARGEST_FINITE && (!st || fabs(x) <= st->largest);
}

static Cell elementwise(int op, Cell a, Cell b);

/* The operand of s that is an immediate, or -1. */
static int immediate_operand(const Stmt *s) {
  if (s->op >= BFRT_NC_MATMUL) return -1; /* the nki.isa instructions: codes, patterns, several immediates */
  for (int i = 1; i < s->noperands; i++)
    if (s->operands[i].kind == OPND_IMM) return i;
  return -1;
}

/* s's exact result at [i, j], but computed with the immediate the engines
 * have, the decimal as written rounded to f32 (imm >= 0, its operand). */
static double with_rounded_immediate(const Stmt *s, const Operands *o, int imm, int64_t i, int64_t j) {
  Cell rounded = {(double)s->operands[imm].imm, 0};
  return s->op == BFRT_FILL ? rounded.v : elementwise(s->op, *at(o->v[1], i, j), rounded).v;
}

/* "%g, which overflows f32 to Inf," or the same for st, or "NaN" or "Inf". */
static const char *overflow_of(F64 *r, double x, const StorageType *st) {
  if (isnan(x)) return "NaN";
  if (isinf(x)) return "Inf";
  if (fabs(x) > F32_LARGEST_FINITE) return arena_printf(r->p->arena, "%g, which overflows f32 to Inf,", x);
  return arena_printf(r->p->arena, "%g, which overflows %s to %s,", x, st->name, st->overflow);
}

/* An op must give, from finite inputs, values its destination's type (f32,
 * or st) can hold. result is the op's result, not yet in the destination,
 * so the inputs are still the op's own. An exact result that fits, but
 * not once the immediate is rounded to f32 as the engines have it, is the
 * immediate's fault, not the arithmetic's, and is reported so. */
static int check_finite(F64 *r, const Stmt *s, const Operands *ops, View result, const StorageType *st) {
  int imm = immediate_operand(s);
  for (int64_t i = 0; i < result.rows; i++)
    for (int64_t j = 0; j < result.cols; j++) {
      double x = at(result, i, j)->v;
      if (fits(x, st)) {
        double y = imm >= 0 ? with_rounded_immediate(s, ops, imm, i, j) : x;
        if (fits(y, st) || !element_inputs_finite(s, ops, i, j)) continue;
        const Operand *f = &s->operands[imm];
        return fail(r, f->span,
                    arena_printf(r->p->arena,
                                 "'%s' produces %s at [%" PRId64 ", %" PRId64 "] of '%s', because the immediate "
                                 "%.*s rounds to %.9g in f32 (the exact result, %.10g, would fit)",
                                 s->op_name, overflow_of(r, y, st), i, j, s->operands[0].name,
                                 (int)(f->span.end - f->span.begin), r->p->src.text + f->span.begin, (double)f->imm, x));
      }
      if (!element_inputs_finite(s, ops, i, j)) continue;
      return fail(r, s->op_span,
                  arena_printf(r->p->arena, "'%s' produces %s from finite inputs, at [%" PRId64 ", %" PRId64
                               "] of '%s'", s->op_name, overflow_of(r, x, st), i, j, s->operands[0].name));
    }
  return 0;
}

/* ---- The ops, from their definitions, with their error bounds.
 *
 * Next to each exact value the reference keeps a bound on how far an f32
 * computation of it may be from it: a running error analysis. An op's
 * bound is the error it inherits from its inputs, the most the op's value
 * can move when each input moves within its bound (to every order: a
 * narrow type's rounding is a few percent, and all of a value rounded to
 * a subnormal, where a first-order bound is too small), plus the rounding
 * it adds itself, which its accuracy class
 * (the last column of ops.def) sets: EXACT ops add none, a ROUND op one
 * rounding (u |result|, u = 2^-24), a LIBM op LIBM_ULPS of them (libm is
 * within a few ulp, and sigmoid, silu and gelu round a few times more), a
 * SUM one rounding per addition, of the partial sum so far. Immediates add
 * their own rounding to f32. Inputs are exact. An f32 result is within
 * tolerance when it is within its bound: correct f32 code always is,
 * however long its chains of ops, while an op computed wrongly is off by
 * far more. */
enum { LIBM_ULPS = 8 };
static const double U = 0x1p-24;

static double class_ulps(int op) {
  static const double ulps[BFRT_NACCS] = {[BFRT_ACC_EXACT] = 0, [BFRT_ACC_ROUND] = 1, [BFRT_ACC_LIBM] = LIBM_ULPS,
                                          [BFRT_ACC_SUM] = 1};
  return ulps[op_info(op)->accuracy];
}

static double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* max(a, b): the larger's bound, unless the two are close enough for the
 * f32 values to be in either order. */
static Cell larger(Cell a, Cell b) {
  Cell big = a.v >= b.v ? a : b;
  if (fabs(a.v - b.v) <= a.e + b.e) big.e = a.e > b.e ? a.e : b.e;
  return big;
}

/* The most a function monotone on [x - e, x + e] moves from f(x) there:
 * the error it inherits from x's bound e, to every order. */
static double moved(double (*f)(double), double x, double e) {
  double fx = f(x);
  return fmax(fabs(f(x + e) - fx), fabs(fx - f(x - e)));
}

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double rsqrt(double x) { return 1 / sqrt(x); }
static double recip(double x) { return 1 / x; }
static double sqrt_clamped(double x) { return sqrt(x > 0 ? x : 0); }

/* x times y where each is within its bound of the exact value. */
static double product_error(Cell a, Cell b) { return fabs(b.v) * a.e + fabs(a.v) * b.e + a.e * b.e; }

/* d = f(a, b): the value, and its bound from a's bound ea and b's eb (b
 * is the second tile's element, its row or column broadcast, or the
 * immediate). */
static Cell elementwise(int op, Cell a, Cell b) {
  double x = a.v, y = b.v, r;
  double e; /* inherited error */
  switch (op) {
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: return a;
  case BFRT_RELU: return (Cell){x > 0 ? x : 0, a.e};
  case BFRT_ABS: return (Cell){fabs(x), a.e};
  case BFRT_MAX: case BFRT_MAX_IMM: return larger(a, b);
  case BFRT_SCALE: case BFRT_MUL: case BFRT_MUL_ROW: case BFRT_MUL_COL: case BFRT_MUL_IMM:
    r = x * y, e = product_error(a, b); break;
  case BFRT_ADD: case BFRT_ADD_ROW: case BFRT_ADD_COL: case BFRT_ADD_IMM: r = x + y, e = a.e + b.e; break;
  case BFRT_SUB: case BFRT_SUB_ROW: case BFRT_SUB_COL: case BFRT_SUB_IMM: r = x - y, e = a.e + b.e; break;
  case BFRT_EXP: r = exp(x), e = r > 0 ? r * expm1(a.e) : exp(x + a.e); break; /* r = 0: 0 * Inf would be NaN */
  case BFRT_TANH: r = tanh(x), e = moved(tanh, x, a.e); break;
  /* a bound reaching 0 bounds nothing: 1/x and 1/sqrt(x) are unbounded there */
  case BFRT_RSQRT: r = 1 / sqrt(x), e = x - a.e > 0 ? moved(rsqrt, x, a.e) : INFINITY; break;
  case BFRT_RECIP: r = 1 / x, e = fabs(x) - a.e > 0 ? moved(recip, x, a.e) : INFINITY; break;
  case BFRT_SQRT: r = sqrt(x), e = moved(sqrt_clamped, x, a.e); break;
  case BFRT_SQUARE: r = x * x, e = product_error(a, a); break;
  case BFRT_SIGMOID: r = sigmoid(x), e = moved(sigmoid, x, a.e); break;
  case BFRT_SILU: r = x / (1 + exp(-x)), e = 1.1 * a.e + LIBM_ULPS * U * fabs(x); break; /* |silu'| < 1.1 */
  case BFRT_GELU: r = gelu_tanh(x), e = 1.13 * a.e + LIBM_ULPS * U * fabs(x); break; /* |gelu'| < 1.13 */
  default: bug("reference_f64: op %d is not elementwise", op);
  }
  return (Cell){r, e + class_ulps(op) * U * (fabs(r) + e)};
}

/* The operand op combines with a[i,j] besides a itself. */
static Cell second(int op, const Operands *o, int64_t i, int64_t j) {
  switch (op) {
  case BFRT_ADD: case BFRT_SUB: case BFRT_MUL: case BFRT_MAX: return *at(o->v[2], i, j);
  case BFRT_ADD_ROW: case BFRT_SUB_ROW: case BFRT_MUL_ROW: return *at(o->v[2], i, 0);
  case BFRT_ADD_COL: case BFRT_SUB_COL: case BFRT_MUL_COL: return *at(o->v[2], 0, j);
  default: return o->imm;
  }
}

/* acc + term, left to right: one rounding of the new partial sum. */
static Cell accumulate(Cell acc, Cell term) {
  double sum = acc.v + term.v;
  return (Cell){sum, acc.e + term.e + U * (fabs(sum) + acc.e + term.e)};
}

/* One term of a row reduction: the element, its square or its exponential. */
static Cell reduction_term(int op, Cell x) {
  if (op == BFRT_ROWSUM_SQUARE) return (Cell){x.v * x.v, product_error(x, x) + U * (x.v * x.v + product_error(x, x))};
  if (op == BFRT_ROWSUM_EXP) return (Cell){exp(x.v), exp(x.v) * (expm1(x.e) + LIBM_ULPS * U * exp(x.e))};
  return x;
}

/* ---- The nki.isa instructions, written out from docs/language.md with
 * the same running bounds: every f32 operation rounds once, u |result|,
 * on top of what its operands carry through its derivative. */

static Cell c_add(Cell a, Cell b) { return accumulate(a, b); }
static Cell c_sub(Cell a, Cell b) { return accumulate(a, (Cell){-b.v, b.e}); }
/* a * b: what the operands carry (with the product of their bounds, which
 * matters where one is far off, as a narrow type's subnormal is), then the
 * rounding of the f32 product of values that far off. */
static Cell c_mul(Cell a, Cell b) {
  double v = a.v * b.v, e = product_error(a, b);
  return (Cell){v, e + U * (fabs(v) + e)};
}
/* a / b; b's bound must be below |b| (a count, or a sum of counts: exact). */
static Cell c_div(Cell a, Cell b) {
  double v = a.v / b.v;
  return (Cell){v, a.e / fabs(b.v) + fabs(v) * b.e / fabs(b.v) + U * fabs(v)};
}
static Cell smaller(Cell a, Cell b) {
  Cell neg = larger((Cell){-a.v, a.e}, (Cell){-b.v, b.e});
  return (Cell){-neg.v, neg.e};
}
/* A comparison: 1 or 0, exact unless the operands are close enough for
 * the f32 values to compare the other way (then either: bound 1). */
static Cell compared(bool holds, Cell a, Cell b) {
  return (Cell){holds ? 1 : 0, fabs(a.v - b.v) <= a.e + b.e ? 1 : 0};
}

static Cell alu(int code, Cell a, Cell b) {
  switch (code) {
  case BFRT_ALU_ADD: return c_add(a, b);
  case BFRT_ALU_SUBTRACT: return c_sub(a, b);
  case BFRT_ALU_MULTIPLY: return c_mul(a, b);
  case BFRT_ALU_MAXIMUM: return larger(a, b);
  case BFRT_ALU_MINIMUM: return smaller(a, b);
  case BFRT_ALU_EQUAL: return compared(a.v == b.v, a, b);
  case BFRT_ALU_NOT_EQUAL: return compared(a.v != b.v, a, b);
  case BFRT_ALU_GREATER: return compared(a.v > b.v, a, b);
  case BFRT_ALU_GREATER_EQUAL: return compared(a.v >= b.v, a, b);
  case BFRT_ALU_LESS: return compared(a.v < b.v, a, b);
  case BFRT_ALU_LESS_EQUAL: return compared(a.v <= b.v, a, b);
  default: bug("reference_f64: ALU op %d", code);
  }
}

/* An activation function is the op of its name (and bound). */
static Cell activate(int fn, Cell x) {
  static const int ops[BFRT_NFN] = {
      [BFRT_FN_COPY] = BFRT_COPY, [BFRT_FN_EXP] = BFRT_EXP,         [BFRT_FN_TANH] = BFRT_TANH,
      [BFRT_FN_RELU] = BFRT_RELU, [BFRT_FN_SIGMOID] = BFRT_SIGMOID, [BFRT_FN_GELU] = BFRT_GELU,
      [BFRT_FN_SILU] = BFRT_SILU, [BFRT_FN_SQUARE] = BFRT_SQUARE,   [BFRT_FN_SQRT] = BFRT_SQRT,
      [BFRT_FN_RSQRT] = BFRT_RSQRT, [BFRT_FN_ABS] = BFRT_ABS,       [BFRT_FN_RECIPROCAL] = BFRT_RECIP,
  };
  return elementwise(ops[fn], x, (Cell){0, 0});
}

static int code_of(const Operands *o, int i) { return (int)o->imms[i].v; }

/* An operand of tensor_scalar or a scan's initial: the immediate, or the
 * [P, 1] tile's value for partition p. */
static Cell scalar_of(const Operands *o, int i, int64_t p) { return o->v[i].data ? *at(o->v[i], p, 0) : o->imms[i]; }

/* The affine value of iota and affine_select: integers (sema), exact. */
static double affine(const Operands *o, int64_t p, int64_t j) {
  return o->imms[2].v + (double)p * o->imms[3].v + (double)j * o->imms[1].v;
}

/* The count, mean and M2 of s[p, first], s[p, first + 2], ...: the mean
 * from the sum and the count (exact), M2 from the squared deviations. */
static void moments(View s, int64_t p, int64_t first, Cell out[3]) {
  Cell n = {0, 0}, total = {0, 0}, m2 = {0, 0};
  for (int64_t j = first; j < s.cols; j += 2) n.v += 1, total = c_add(total, *at(s, p, j));
  Cell mean = n.v > 0 ? c_div(total, n) : (Cell){0, 0};
  for (int64_t j = first; j < s.cols; j += 2) {
    Cell dev = c_sub(*at(s, p, j), mean);
    m2 = c_add(m2, c_mul(dev, dev));
  }
  out[0] = n, out[1] = mean, out[2] = m2;
}

/* The (count, mean, M2) triples of s[p] combined into a mean and a variance. */
static void aggregate(View s, int64_t p, Cell out[2]) {
  Cell n = {0, 0}, weighted = {0, 0}, m2 = {0, 0};
  for (int64_t t = 0; t + 2 < s.cols; t += 3)
    n = c_add(n, *at(s, p, t)), weighted = c_add(weighted, c_mul(*at(s, p, t), *at(s, p, t + 1)));
  bool some = n.v > 0;
  Cell mean = some ? c_div(weighted, n) : (Cell){0, 0};
  for (int64_t t = 0; t + 2 < s.cols; t += 3) {
    Cell dev = c_sub(*at(s, p, t + 1), mean);
    m2 = c_add(m2, c_add(*at(s, p, t + 2), c_mul(*at(s, p, t), c_mul(dev, dev))));
  }
  out[0] = mean, out[1] = some ? c_div(m2, n) : (Cell){0, 0};
}

/* Results go to out (the destination's shape) and, for activation_acc's
 * accumulator, to acc_out (one cell a partition). */
static void compute_isa_into(int op, const Operands *o, View out, Cell *acc_out) {
  View d = o->v[0];
  switch (op) {
  case BFRT_NC_MATMUL: case BFRT_NC_MATMUL_ACC:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) {
        Cell acc = op == BFRT_NC_MATMUL_ACC ? *at(d, i, j) : (Cell){0, 0};
        for (int64_t k = 0; k < o->v[1].rows; k++) acc = accumulate(acc, c_mul(*at(o->v[1], k, i), *at(o->v[2], k, j)));
        *at(out, i, j) = acc;
      }
    return;
  case BFRT_NC_TRANSPOSE:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = *at(o->v[1], j, i);
    return;
  case BFRT_MEMSET:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = o->imms[1];
    return;
  case BFRT_IOTA:
    for (int64_t p = 0; p < d.rows; p++)
      for (int64_t j = 0; j < d.cols; j++) {
        double v = affine(o, p, j);
        *at(out, p, j) = (Cell){v, U * fabs(v)};
      }
    return;
  case BFRT_AFFINE_SELECT:
    for (int64_t p = 0; p < d.rows; p++)
      for (int64_t j = 0; j < d.cols; j++)
        *at(out, p, j) = sem_holds(code_of(o, 6), affine(o, p, j)) ? *at(o->v[4], p, j) : o->imms[5];
    return;
  case BFRT_TENSOR_REDUCE: case BFRT_TENSOR_REDUCE_NEG:
    for (int64_t p = 0; p < o->v[2].rows; p++) {
      Cell acc = *at(o->v[2], p, 0);
      for (int64_t j = 1; j < o->v[2].cols; j++) acc = alu(code_of(o, 1), acc, *at(o->v[2], p, j));
      if (op == BFRT_TENSOR_REDUCE_NEG) acc.v = -acc.v;
      *at(out, p, 0) = acc;
    }
    return;
  case BFRT_TENSOR_SCALAR: case BFRT_TENSOR_SCALAR_V: case BFRT_TENSOR_SCALAR2: case BFRT_TENSOR_SCALAR2_V: {
    bool two = op == BFRT_TENSOR_SCALAR2 || op == BFRT_TENSOR_SCALAR2_V;
    for (int64_t p = 0; p < d.rows; p++)
      for (int64_t j = 0; j < d.cols; j++) {
        Cell x = alu(code_of(o, 2), *at(o->v[1], p, j), scalar_of(o, 3, p));
        *at(out, p, j) = two ? alu(code_of(o, 4), x, scalar_of(o, 5, p)) : x;
      }
    return;
  }
  case BFRT_ACTIVATION: case BFRT_ACTIVATION_BS: case BFRT_ACTIVATION_ACC:
    for (int64_t p = 0; p < d.rows; p++) {
      Cell sum = acc_out ? *at(o->v[5], p, 0) : (Cell){0, 0};
      for (int64_t j = 0; j < d.cols; j++) {
        Cell x = *at(o->v[2], p, j);
        if (op != BFRT_ACTIVATION) x = c_add(c_mul(x, o->imms[4]), *at(o->v[3], p, 0));
        Cell y = activate(code_of(o, 1), x);
        *at(out, p, j) = y;
        sum = accumulate(sum, y);
      }
      if (acc_out) acc_out[p] = sum;
    }
    return;
  case BFRT_TENSOR_TENSOR_SCAN: case BFRT_TENSOR_TENSOR_SCAN_V:
    for (int64_t p = 0; p < d.rows; p++) {
      Cell r = scalar_of(o, 3, p);
      for (int64_t j = 0; j < d.cols; j++) {
        r = alu(code_of(o, 5), alu(code_of(o, 4), *at(o->v[1], p, j), r), *at(o->v[2], p, j));
        *at(out, p, j) = r;
      }
    }
    return;
  case BFRT_BN_STATS:
    for (int64_t p = 0; p < d.rows; p++) {
      Cell even[3], odd[3];
      moments(o->v[1], p, 0, even);
      moments(o->v[1], p, 1, odd);
      for (int i = 0; i < 3; i++) *at(out, p, i) = even[i], *at(out, p, 3 + i) = odd[i];
    }
    return;
  case BFRT_BN_AGGR:
    for (int64_t p = 0; p < d.rows; p++) {
      Cell r[2];
      aggregate(o->v[1], p, r);
      *at(out, p, 0) = r[0], *at(out, p, 1) = r[1];
    }
    return;
  case BFRT_PERMUTE: {
    int64_t groups = (int64_t)o->imms[2].v, inner = d.cols / groups;
    for (int64_t p = 0; p < d.rows; p++)
      for (int64_t a = 0; a < groups; a++)
        for (int64_t b = 0; b < inner; b++) *at(out, p, b * groups + a) = *at(o->v[1], p, a * inner + b);
    return;
  }
  default: bug("reference_f64: op %d has no definition", op);
  }
}

static void compute_isa(int op, const Operands *o, View out) { compute_isa_into(op, o, out, NULL); }

/* The result goes to out first, so a destination that is also a source
 * reads only old values. */
static void compute(int op, const Operands *o, View out) {
  View a = o->v[1], d = o->v[0];
  switch (op) {
  case BFRT_FILL:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = o->imm;
    return;
  case BFRT_MATMUL: case BFRT_MATMUL_ACC:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) {
        Cell acc = op == BFRT_MATMUL_ACC ? *at(d, i, j) : (Cell){0, 0};
        for (int64_t k = 0; k < a.cols; k++) {
          Cell x = *at(a, i, k), y = *at(o->v[2], k, j);
          double prod = x.v * y.v;
          double e = product_error(x, y);
          acc = accumulate(acc, (Cell){prod, e + U * (fabs(prod) + e)});
        }
        *at(out, i, j) = acc;
      }
    return;
  case BFRT_TRANSPOSE:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = *at(a, j, i);
    return;
  case BFRT_ROWMAX:
    for (int64_t i = 0; i < a.rows; i++) {
      Cell m = *at(a, i, 0);
      for (int64_t j = 1; j < a.cols; j++) m = larger(*at(a, i, j), m);
      *at(out, i, 0) = m;
    }
    return;
  case BFRT_ROWSUM: case BFRT_ROWSUM_SQUARE: case BFRT_ROWSUM_EXP:
    for (int64_t i = 0; i < a.rows; i++) {
      Cell acc = {0, 0};
      for (int64_t j = 0; j < a.cols; j++) acc = accumulate(acc, reduction_term(op, *at(a, i, j)));
      *at(out, i, 0) = acc;
    }
    return;
  default:
    if (op >= BFRT_NC_MATMUL) {
      compute_isa(op, o, out);
      return;
    }
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = elementwise(op, *at(a, i, j), second(op, o, i, j));
  }
}

static void mark_stored(F64 *r, const Stmt *s, const Operands *o) {
  const Operand *dst = &s->operands[0];
  Cell *first = r->tensors[dst->decl];
  for (int64_t i = 0; i < o->v[0].rows; i++) /* a strided slice's own steps */
    for (int64_t j = 0; j < o->v[0].cols; j++) r->stored[dst->decl][at(o->v[0], i, j) - first] = true;
}

/* activation_acc's second write: the accumulator, rounded to its type
 * like any destination, checked like one (its inputs were finite). */
static int write_accumulator(F64 *r, const Stmt *s, Operands *o, const Cell *acc) {
  const Operand *a = &s->operands[5];
  View v = o->v[5];
  const StorageType *st = storage_type(operand_type(r, a));
  for (int64_t p = 0; p < v.rows; p++) {
    bool inputs = isfinite(at(v, p, 0)->v) && isfinite(at(o->v[3], p, 0)->v) && finite_span(o->v[2], p, 0, 1, o->v[2].cols);
    if (fits(acc[p].v, st) || !inputs) continue;
    return fail(r, s->op_span,
                arena_printf(r->p->arena, "'%s' accumulates %s from finite inputs, at [%" PRId64 ", 0] of '%s'", s->op_name,
                             overflow_of(r, acc[p].v, st), p, a->name));
  }
  for (int64_t p = 0; p < v.rows; p++) *at(v, p, 0) = acc[p];
  if (st) widen_for_storage(v, st);
  mark_written(r, a->decl, o->slot[5], v);
  return 0;
}

/* A ragged operand's extent is known only now (sema checked the rest):
 * the views as run must fit the op's shape rule. */
static int check_ragged_shapes(F64 *r, const Stmt *s, const Operands *o) {
  bool ragged = false;
  for (int i = 0; i < s->noperands; i++) ragged |= s->operands[i].clip[0] || s->operands[i].clip[1];
  if (!ragged) return 0;
  const View *v = o->v;
  bool same01 = v[0].rows == v[1].rows && v[0].cols == v[1].cols, fits = true;
  switch (op_info(s->op)->shape) {
  case SHAPE_SAME:
    fits = same01 && (s->noperands < 3 || s->operands[2].kind == OPND_IMM ||
                      (v[0].rows == v[2].rows && v[0].cols == v[2].cols));
    break;
  case SHAPE_MATMUL: fits = v[0].rows == v[1].rows && v[1].cols == v[2].rows && v[0].cols == v[2].cols; break;
  case SHAPE_TRANSPOSE: fits = v[0].rows == v[1].cols && v[0].cols == v[1].rows; break;
  case SHAPE_ROWREDUCE: fits = v[0].rows == v[1].rows && v[0].cols == 1; break;
  case SHAPE_ROWBCAST: fits = same01 && v[2].rows == v[0].rows && v[2].cols == 1; break;
  case SHAPE_COLBCAST: fits = same01 && v[2].rows == 1 && v[2].cols == v[0].cols; break;
  default: break;
  }
  return fits ? 0 : fail(r, s->span, arena_printf(r->p->arena, "'%s': the ragged operands' shapes do not fit the op", s->op_name));
}

static int run_resolved(F64 *r, const Stmt *s, Operands o);

/* A gather or scatter: one partition at a time, in partition order (a
 * scatter's duplicate index: the later partition's row stays). */
static int run_gather(F64 *r, const Stmt *s, const Operands *all) {
  int h = all->hbm, t = 1 - h;
  const Operand *o = &s->operands[h];
  const Tile *tile = &r->p->kernel->tiles[s->operands[t].decl];
  for (int64_t p = 0; p < o->gather->n; p++) {
    Operands one = *all;
    int64_t row;
    gather_row(r, o, p, &row); /* checked in resolve */
    one.v[t] = (View){all->v[t].data + p * all->v[t].stride, 1, all->v[t].cols, all->v[t].stride, all->v[t].cstride};
    one.slot[t] = all->slot[t] + p * tile->cols;
    one.v[h] = (View){r->tensors[o->decl] + row * all->v[h].stride + (all->v[h].data - r->tensors[o->decl]), 1,
                      all->v[h].cols, all->v[h].stride, 0};
    if (run_resolved(r, s, one)) return -1;
  }
  return 0;
}

static int run_instr(F64 *r, const Stmt *s) {
  Operands o;
  if (resolve(r, s, &o) || check_ragged_shapes(r, s, &o) || check_reads(r, s, &o)) return -1;
  if (o.hbm >= 0 && s->operands[o.hbm].gather) return run_gather(r, s, &o);
  return run_resolved(r, s, o);
}

static int run_resolved(F64 *r, const Stmt *s, Operands o) {
  View d = o.v[0];
  if (d.rows * d.cols > r->result_cells) bug("reference_f64: a %lld x %lld result, larger than every tile", (long long)d.rows, (long long)d.cols);
  View out = {r->result, d.rows, d.cols, d.cols, 0}; /* reused: memory must not grow with the instructions */
  Cell *acc = r->result + d.rows * d.cols; /* activation_acc's accumulator: result has room for both */
  if (s->op == BFRT_ACTIVATION_ACC) {
    if (d.rows * d.cols + d.rows > r->result_cells) bug("reference_f64: no room for the accumulator");
    compute_isa_into(s->op, &o, out, acc);
  } else {
    compute(s->op, &o, out);
  }
  ElemType type = operand_type(r, &s->operands[0]);
  const StorageType *st = storage_type(type);
  if (check_finite(r, s, &o, out, st)) return -1; /* before the destination, maybe a source, changes */
  for (int64_t i = 0; i < d.rows; i++) /* a strided slice's cells one by one */
    if (d.cstride > 1)
      for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = *at(out, i, j);
    else
      memcpy(at(d, i, 0), at(out, i, 0), (size_t)d.cols * sizeof(Cell));
  if (st && !stores_exactly(r, s, type)) widen_for_storage(d, st);
  if (s->operands[0].kind == OPND_TILE) mark_written(r, s->operands[0].decl, o.slot[0], d);
  else mark_stored(r, s, &o);
  /* the accumulator last, as runtime/semantics.c writes it: where it is d, the sum stays */
  return s->op == BFRT_ACTIVATION_ACC ? write_accumulator(r, s, &o, acc) : 0;
}

static int run_stmts(F64 *r, const Stmt *s);

static int run_for(F64 *r, const Stmt *s) {
  int64_t lo, hi;
  if (eval(r, s->lo, &lo) || eval(r, s->hi, &hi)) return -1;
  for (int64_t i = lo; i < hi; i++) {
    r->loopvars[s->loop_id] = i;
    if (run_stmts(r, s->body)) return -1;
  }
  return 0;
}

static int run_if(F64 *r, const Stmt *s) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  bool holds;
  int status = cond_eval(s->cond, &env, &holds, &bad);
  if (status) return eval_failed(r, status, bad, s->cond->span);
  return run_stmts(r, holds ? s->body : s->orelse);
}

static int run_stmts(F64 *r, const Stmt *s) {
  for (; s; s = s->next) {
    int status = 0;
    switch (s->kind) {
    case ST_FOR: status = run_for(r, s); break;
    case ST_BLOCK: status = run_stmts(r, s->body); break;
    case ST_INSTR: status = run_instr(r, s); break;
    case ST_IF: status = run_if(r, s); break;
    case ST_LET: { /* evaluated where it stands: a division by zero or a bad element stops the run here */
      int64_t value;
      status = eval(r, s->lo, &value);
      break;
    }
    }
    if (status) return status;
  }
  return 0;
}

/* Every element of every out tensor was stored to. */
static int check_stored(F64 *r) {
  const Kernel *k = r->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io != IO_OUT) continue;
    int64_t n = r->shapes[t][0] * r->shapes[t][1], missing = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
      if (!r->stored[t][i]) {
        missing++;
        if (first < 0) first = i;
      }
    if (missing)
      return fail(r, k->tensors[t].span,
                  arena_printf(r->p->arena,
                               "%" PRId64 " of the %" PRId64 " elements of out tensor %s are never stored, the "
                               "first at [%" PRId64 ", %" PRId64 "]",
                               missing, n, k->tensors[t].name, first / r->shapes[t][1], first % r->shapes[t][1]));
  }
  return 0;
}

/* ---- The comparison. */

double reference_f64_rel_err(float got, double want, double scale) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want) ? 0 : INFINITY;
  if (isinf(got) || isinf(want)) return got == want ? 0 : INFINITY;
  double floor = scale * 0x1p-10 > FLT_MIN ? scale * 0x1p-10 : FLT_MIN;
  double denom = fabs(want) > floor ? fabs(want) : floor;
  return fabs((double)got - want) / denom;
}

/* Whether got is exactly the value: NaN for NaN (from a NaN or an Inf in
 * the inputs: a NaN made from finite inputs stops the run before this),
 * the same infinity, or the same number. */
static bool same_value(float got, double exact) { return (isnan(got) && isnan(exact)) || (double)got == exact; }

/* |got - exact| over its bound; within tolerance when at most 1. The bound
 * gets a hair of slack for the f64 reference's own roundings, and f32's
 * smallest normal for underflow. */
static double bound_ratio(float got, double exact, double bound) {
  if (same_value(got, exact)) return 0;
  double diff = fabs((double)got - exact);
  if (isnan(diff) || isnan(bound)) return INFINITY; /* a NaN bound must not pass as within it */
  double allowed = bound * (1 + 0x1p-20) + FLT_MIN;
  return diff / allowed;
}

bool reference_f64_compare(Program *p, const RefTensor *got, const ExactTensor *exact, ExactErrors *errors,
                           const char **report) {
  const Kernel *k = p->kernel;
  *errors = (ExactErrors){0};
  *report = NULL;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN) continue;
    int64_t n = got[t].rows * got[t].cols;
    double scale = 0;
    for (int64_t i = 0; i < n; i++)
      if (fabs(exact[t].value[i]) > scale) scale = fabs(exact[t].value[i]);
    const StorageType *st = storage_type(k->tensors[t].type);
    if (st) errors->narrow_out = true;
    else errors->f32_out = true;
    for (int64_t i = 0; i < n; i++) {
      float g = got[t].data[i];
      double want = exact[t].value[i], diff = same_value(g, want) ? 0 : fabs((double)g - want);
      if (!(diff <= errors->max_abs_err)) errors->max_abs_err = isnan(diff) ? INFINITY : diff;
      /* a narrow type's error in units of its precision at the tensor's scale: the relative error
       * of an element near zero says nothing at 8 significant bits */
      double rel = st ? (diff == 0 ? 0 : isnan(diff) ? INFINITY : diff / (st->unit * (scale > FLT_MIN ? scale : FLT_MIN)))
                      : reference_f64_rel_err(g, want, scale);
      double *worst = st ? &errors->max_type_err : &errors->max_rel_err;
      if (rel > *worst) *worst = rel;
      double ratio = bound_ratio(g, want, exact[t].bound[i]);
      if (!(ratio > errors->max_bound_ratio)) continue;
      errors->max_bound_ratio = ratio;
      if (ratio > 1)
        *report = arena_printf(p->arena,
                               "tensor %s is off the f64 reference at [%" PRId64 ", %" PRId64 "]: %.9g, exactly "
                               "%.9g, by %.3g, %.3g times the error f32 arithmetic can make there (%.3g)",
                               k->tensors[t].name, i / got[t].cols, i % got[t].cols, (double)g, want, diff, ratio,
                               exact[t].bound[i]);
    }
  }
  return errors->max_bound_ratio <= 1;
}

int reference_f64(Program *p, const int64_t *params, const RefTensor *inputs, ExactTensor *results,
                  const char **err) {
  const Kernel *k = p->kernel;
  Arena *a = p->arena;
  F64 r = {p, params, ARENA_ARRAY(a, int64_t, k->nloops + 1), ARENA_ARRAY(a, Cell *, k->ntensors + 1), NULL,
           ARENA_ARRAY(a, bool *, k->ntensors + 1), ARENA_ARRAY(a, Cell *, k->ntiles + 1),
           ARENA_ARRAY(a, bool *, k->ntiles + 1), NULL, 0, NULL};
  r.shapes = arena_alloc(a, (size_t)(k->ntensors + 1) * sizeof *r.shapes);
  for (int t = 0; t < k->ntensors; t++) {
    int64_t n = inputs[t].rows * inputs[t].cols;
    r.shapes[t][0] = inputs[t].rows;
    r.shapes[t][1] = inputs[t].cols;
    r.tensors[t] = ARENA_ARRAY(a, Cell, n + 1);
    for (int64_t i = 0; i < n; i++) r.tensors[t][i] = (Cell){inputs[t].data[i], 0};
    r.stored[t] = ARENA_ARRAY(a, bool, n + 1);
  }
  for (int t = 0; t < k->ntiles; t++) {
    const Tile *x = &k->tiles[t];
    r.tiles[t] = ARENA_ARRAY(a, Cell, x->slots * x->rows * x->cols);
    r.written[t] = ARENA_ARRAY(a, bool, x->slots * x->rows * x->cols);
    if (x->rows * x->cols + x->rows > r.result_cells) r.result_cells = x->rows * x->cols + x->rows;
  }
  r.result = ARENA_ARRAY(a, Cell, r.result_cells + 1);
  if (run_stmts(&r, k->body) || check_stored(&r)) {
    *err = r.err;
    return -1;
  }
  for (int t = 0; t < k->ntensors; t++) {
    int64_t n = inputs[t].rows * inputs[t].cols;
    results[t] = (ExactTensor){inputs[t].rows, inputs[t].cols, ARENA_ARRAY(a, double, n + 1),
                               ARENA_ARRAY(a, double, n + 1)};
    for (int64_t i = 0; i < n; i++) {
      results[t].value[i] = r.tensors[t][i].v;
      results[t].bound[i] = r.tensors[t][i].e;
    }
  }
  return 0;
}

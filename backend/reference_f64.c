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
 *     large for f32 (which the engines would round to Inf);
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

/* An exact value and the bound on an f32 computation's distance from it. */
typedef struct Cell {
  double v, e;
} Cell;

/* A window of cells: rows x cols, stride between rows. */
typedef struct View {
  Cell *data;
  int64_t rows, cols, stride;
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

static Cell *at(View v, int64_t i, int64_t j) { return v.data + i * v.stride + j; }

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
  View v[3];
  Cell imm; /* the exact immediate; its bound is its rounding to f32 */
  int hbm;     /* which operand is an hbm tile, or -1 */
  int64_t slot[3]; /* a tile operand's first element among its tile's (tile_operand) */
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
  for (int d = 0; d < 2; d++) {
    if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
    if (lo[d] < 0 || lo[d] > size[d] - n[d])
      return fail(r, o->span, arena_printf(r->p->arena, "view %" PRId64 ":%" PRId64 " of tile %s is outside its %s 0:%" PRId64,
                                           lo[d], lo[d] + n[d], t->name, d ? "columns" : "partitions", size[d]));
  }
  *at = slot * t->rows * t->cols + lo[0] * t->cols + lo[1];
  *v = (View){r->tiles[o->decl] + *at, n[0], n[1], t->cols};
  return 0;
}

static int hbm_operand(F64 *r, const Operand *o, View unit, View *v) {
  int64_t row, col, rows = r->shapes[o->decl][0], cols = r->shapes[o->decl][1];
  if (o->view) { /* an element slice */
    int64_t lo[2] = {0, 0}, n[2], size[2] = {rows, cols};
    for (int d = 0; d < 2; d++) {
      if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
      if (n[d] > size[d] || lo[d] < 0 || lo[d] > size[d] - n[d])
        return fail(r, o->span, arena_printf(r->p->arena, "%s: %s %" PRId64 ":%" PRId64 " are outside the tensor's 0:%" PRId64,
                                             r->p->kernel->tensors[o->decl].name, d ? "columns" : "rows", lo[d],
                                             lo[d] + n[d], size[d]));
    }
    *v = (View){r->tensors[o->decl] + lo[0] * cols + lo[1], n[0], n[1], cols};
    return 0;
  }
  if (eval(r, o->row, &row) || eval(r, o->col, &col)) return -1;
  if (row < 0 || col < 0 || unit.rows > rows || unit.cols > cols || row > (rows - unit.rows) / unit.rows ||
      col > (cols - unit.cols) / unit.cols)
    return fail(r, o->span, arena_printf(r->p->arena, "%s[%" PRId64 ", %" PRId64 "] is out of bounds",
                                         r->p->kernel->tensors[o->decl].name, row, col));
  *v = (View){r->tensors[o->decl] + row * unit.rows * cols + col * unit.cols, unit.rows, unit.cols, cols};
  return 0;
}

static int resolve(F64 *r, const Stmt *s, Operands *ops) {
  memset(ops, 0, sizeof *ops);
  ops->hbm = -1;
  for (int i = 0; i < s->noperands && i < 3; i++) {
    const Operand *o = &s->operands[i];
    if (o->kind == OPND_TILE && tile_operand(r, o, &ops->v[i], &ops->slot[i])) return -1;
    if (o->kind == OPND_HBM) ops->hbm = i;
    if (o->kind == OPND_IMM) ops->imm = (Cell){o->imm_value, fabs(o->imm_value - (double)o->imm)};
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
      if (!w[at + i * v.stride + j]) return at + i * v.stride + j;
  return -1;
}

/* Every tile element the op reads must have been written. */
static int check_reads(F64 *r, const Stmt *s, const Operands *ops) {
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    bool reads = i > 0 || s->op == BFRT_MATMUL_ACC;
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
    for (int64_t j = 0; j < v.cols; j++) r->written[t][at + i * v.stride + j] = true;
}

static bool all_finite(View v) {
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++)
      if (!isfinite(at(v, i, j)->v)) return false;
  return true;
}

/* An op whose inputs are finite must give values its destination's type
 * (f32, or st) can hold. */
static int check_finite(F64 *r, const Stmt *s, const Operands *ops, bool inputs_finite, const StorageType *st) {
  if (!inputs_finite) return 0;
  View d = ops->v[0];
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) {
      double x = at(d, i, j)->v;
      if (isfinite(x) && fabs(x) <= FLT_MAX && (!st || fabs(x) <= st->largest)) continue;
      const char *what = isnan(x) ? "NaN"
                         : isinf(x) ? "Inf"
                         : fabs(x) > FLT_MAX
                             ? arena_printf(r->p->arena, "%g, which overflows f32 to Inf,", x)
                             : arena_printf(r->p->arena, "%g, which overflows %s to %s,", x, st->name, st->overflow);
      return fail(r, s->op_span,
                  arena_printf(r->p->arena, "'%s' produces %s from finite inputs, at [%" PRId64 ", %" PRId64
                               "] of '%s'", s->op_name, what, i, j, s->operands[0].name));
    }
  return 0;
}

/* ---- The ops, from their definitions, with their error bounds.
 *
 * Next to each exact value the reference keeps a bound on how far an f32
 * computation of it may be from it: a first-order running error analysis.
 * An op's bound is the error it inherits from its inputs, through its
 * derivative, plus the rounding it adds itself, which its accuracy class
 * (the last column of ops.def) sets: EXACT ops add none, a ROUND op one
 * rounding (u |result|, u = 2^-24), a LIBM op LIBM_ULPS of them (libm is
 * within a few ulp, and sigmoid, silu and gelu round a few times more), a
 * SUM one rounding per addition, of the partial sum so far. Immediates add
 * their own rounding to f32. Inputs are exact. An f32 result is within
 * tolerance when it is within its bound: correct f32 code always is, to
 * first order, however long its chains of ops, while an op computed wrongly
 * is off by far more. */
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
    r = x * y, e = fabs(y) * a.e + fabs(x) * b.e; break;
  case BFRT_ADD: case BFRT_ADD_ROW: case BFRT_ADD_COL: case BFRT_ADD_IMM: r = x + y, e = a.e + b.e; break;
  case BFRT_SUB: case BFRT_SUB_ROW: case BFRT_SUB_COL: case BFRT_SUB_IMM: r = x - y, e = a.e + b.e; break;
  case BFRT_EXP: r = exp(x), e = r * a.e; break;
  case BFRT_TANH: r = tanh(x), e = (1 - r * r) * a.e; break;
  case BFRT_RSQRT: r = 1 / sqrt(x), e = 0.5 * fabs(r * r * r) * a.e; break;
  case BFRT_RECIP: r = 1 / x, e = r * r * a.e; break;
  case BFRT_SQRT: r = sqrt(x), e = r > 0 ? a.e / (2 * r) : sqrt(a.e); break;
  case BFRT_SQUARE: r = x * x, e = 2 * fabs(x) * a.e; break;
  case BFRT_SIGMOID: r = 1 / (1 + exp(-x)), e = r * (1 - r) * a.e; break;
  case BFRT_SILU: r = x / (1 + exp(-x)), e = 1.1 * a.e + LIBM_ULPS * U * fabs(x); break; /* |silu'| < 1.1 */
  case BFRT_GELU: r = gelu_tanh(x), e = 1.13 * a.e + LIBM_ULPS * U * fabs(x); break; /* |gelu'| < 1.13 */
  default: bug("reference_f64: op %d is not elementwise", op);
  }
  return (Cell){r, e + class_ulps(op) * U * fabs(r)};
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
  return (Cell){sum, acc.e + term.e + U * fabs(sum)};
}

/* One term of a row reduction: the element, its square or its exponential. */
static Cell reduction_term(int op, Cell x) {
  if (op == BFRT_ROWSUM_SQUARE) return (Cell){x.v * x.v, 2 * fabs(x.v) * x.e + U * x.v * x.v};
  if (op == BFRT_ROWSUM_EXP) return (Cell){exp(x.v), exp(x.v) * (x.e + LIBM_ULPS * U)};
  return x;
}

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
          acc = accumulate(acc, (Cell){prod, fabs(y.v) * x.e + fabs(x.v) * y.e + U * fabs(prod)});
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
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = elementwise(op, *at(a, i, j), second(op, o, i, j));
  }
}

static bool inputs_finite(const Stmt *s, const Operands *o) {
  for (int i = 1; i < s->noperands; i++)
    if (s->operands[i].kind != OPND_IMM && !all_finite(o->v[i])) return false;
  return s->op != BFRT_MATMUL_ACC || all_finite(o->v[0]);
}

static void mark_stored(F64 *r, const Stmt *s, const Operands *o) {
  const Operand *dst = &s->operands[0];
  int64_t cols = r->shapes[dst->decl][1];
  int64_t first = o->v[0].data - r->tensors[dst->decl];
  for (int64_t i = 0; i < o->v[0].rows; i++)
    for (int64_t j = 0; j < o->v[0].cols; j++) r->stored[dst->decl][first + i * cols + j] = true;
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

static int run_instr(F64 *r, const Stmt *s) {
  Operands o;
  if (resolve(r, s, &o) || check_ragged_shapes(r, s, &o) || check_reads(r, s, &o)) return -1;
  View d = o.v[0];
  if (d.rows * d.cols > r->result_cells) bug("reference_f64: a %lld x %lld result, larger than every tile", (long long)d.rows, (long long)d.cols);
  View out = {r->result, d.rows, d.cols, d.cols}; /* reused: memory must not grow with the instructions */
  bool finite_in = inputs_finite(s, &o); /* before the destination, maybe a source, changes */
  compute(s->op, &o, out);
  for (int64_t i = 0; i < d.rows; i++) memcpy(at(d, i, 0), at(out, i, 0), (size_t)d.cols * sizeof(Cell));
  ElemType type = operand_type(r, &s->operands[0]);
  const StorageType *st = storage_type(type);
  if (st && !stores_exactly(r, s, type)) widen_for_storage(d, st);
  if (s->operands[0].kind == OPND_TILE) mark_written(r, s->operands[0].decl, o.slot[0], d);
  else mark_stored(r, s, &o);
  return check_finite(r, s, &o, finite_in, st);
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
  if (isnan(diff)) return INFINITY;
  double allowed = bound * (1 + 0x1p-20) + FLT_MIN;
  return diff / allowed;
}

bool reference_f64_compare(Program *p, const RefTensor *got, const ExactTensor *exact, ExactErrors *errors,
                           const char **report) {
  const Kernel *k = p->kernel;
  *errors = (ExactErrors){0, 0, 0};
  *report = NULL;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN) continue;
    int64_t n = got[t].rows * got[t].cols;
    double scale = 0;
    for (int64_t i = 0; i < n; i++)
      if (fabs(exact[t].value[i]) > scale) scale = fabs(exact[t].value[i]);
    for (int64_t i = 0; i < n; i++) {
      float g = got[t].data[i];
      double want = exact[t].value[i], diff = same_value(g, want) ? 0 : fabs((double)g - want);
      if (!(diff <= errors->max_abs_err)) errors->max_abs_err = isnan(diff) ? INFINITY : diff;
      double rel = reference_f64_rel_err(g, want, scale);
      if (rel > errors->max_rel_err) errors->max_rel_err = rel;
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
    if (x->rows * x->cols > r.result_cells) r.result_cells = x->rows * x->cols;
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

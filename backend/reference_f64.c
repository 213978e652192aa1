/* reference_f64.c: the independent numerical reference.
 *
 * The sequential reference (reference.c) runs the same op code as the
 * engines (runtime/semantics.c), so a match with it proves the
 * synchronization, not the arithmetic: a kernel that computes nonsense the
 * same way twice matches. This file is the second opinion. It walks the
 * checked AST in program order like reference.c, but every value is a
 * double, every op is written out again here from its definition in
 * docs/language.md, in the plainest loops, and nothing is shared with the
 * runtime but the op numbering. `bfsync run` compares the engines' f32
 * results with it (max_abs_err_f64, max_rel_err_f64) against the tolerance
 * of the op classes the kernel uses.
 *
 * Because it sees every value the kernel computes, it is also where the
 * numerical diagnostics live, each stopping the run with the source line:
 *   - a tile slot read before anything wrote it (on hardware, SBUF and
 *     PSUM hold whatever the last kernel left there; bfsync zeroes them,
 *     which would hide the bug);
 *   - an op that turns finite inputs into NaN or Inf, or into a value too
 *     large for f32 (which the engines would round to Inf);
 *   - elements of an out tensor that no store ever wrote (they would be
 *     whatever the host's buffer held).
 * Immediates are the decimal values as written (o->imm_value), not their
 * f32 roundings, so the reference sees the kernel the writer meant. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "frontend/ops.h"

/* A window of doubles: rows x cols, stride between rows. */
typedef struct View {
  double *data;
  int64_t rows, cols, stride;
} View;

typedef struct F64 {
  Program *p;
  const int64_t *params;
  int64_t *loopvars;   /* by loop id */
  double **tensors;    /* by tensor */
  int64_t (*shapes)[2];
  bool **stored;       /* by tensor: which elements a store wrote */
  double **tiles;      /* by tile: slots * rows * cols */
  bool **slot_written; /* by tile: which slots an op wrote */
  const char *err;
} F64;

static double *at(View v, int64_t i, int64_t j) { return v.data + i * v.stride + j; }

static int fail(F64 *r, Span span, const char *message) {
  int line, col;
  source_position(&r->p->src, span.begin, &line, &col);
  r->err = arena_printf(r->p->arena, "kernel %s, line %d: %s", r->p->kernel->name, line, message);
  return -1;
}

static int eval(F64 *r, const Expr *e, int64_t *out) {
  const Expr *bad = NULL;
  if (expr_eval(e, r->params, r->loopvars, out, &bad) == 0) return 0;
  return fail(r, bad ? bad->span : e->span, "division by zero");
}

/* ---- Operands. */

typedef struct Operands {
  View v[3];
  double imm;
  int hbm;     /* which operand is an hbm tile, or -1 */
  int64_t slot[3];
} Operands;

static int tile_operand(F64 *r, const Operand *o, View *v, int64_t *slot) {
  const Tile *t = &r->p->kernel->tiles[o->decl];
  *slot = 0;
  if (o->slot && eval(r, o->slot, slot)) return -1;
  if (*slot < 0 || *slot >= t->slots)
    return fail(r, o->span, arena_printf(r->p->arena, "slot %s[%" PRId64 "] is out of range", t->name, *slot));
  *v = (View){r->tiles[o->decl] + *slot * t->rows * t->cols, t->rows, t->cols, t->cols};
  return 0;
}

static int hbm_operand(F64 *r, const Operand *o, View unit, View *v) {
  int64_t row, col, rows = r->shapes[o->decl][0], cols = r->shapes[o->decl][1];
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
    if (o->kind == OPND_IMM) ops->imm = o->imm_value;
  }
  if (ops->hbm >= 0 && hbm_operand(r, &s->operands[ops->hbm], ops->v[1 - ops->hbm], &ops->v[ops->hbm]))
    return -1;
  return 0;
}

/* ---- Diagnostics. */

/* Every tile slot the op reads must have been written. */
static int check_reads(F64 *r, const Stmt *s, const Operands *ops) {
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    bool reads = i > 0 || s->op == BFRT_MATMUL_ACC;
    if (o->kind != OPND_TILE || !reads || r->slot_written[o->decl][ops->slot[i]]) continue;
    const Tile *t = &r->p->kernel->tiles[o->decl];
    return fail(r, o->span,
                arena_printf(r->p->arena, "'%s' reads %s %s%s before anything wrote it", s->op_name,
                             t->mem == MEM_PSUM ? "psum tile" : "tile", t->name,
                             t->slotted ? arena_printf(r->p->arena, "[%" PRId64 "]", ops->slot[i]) : ""));
  }
  return 0;
}

static bool all_finite(View v) {
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++)
      if (!isfinite(*at(v, i, j))) return false;
  return true;
}

/* An op whose inputs are finite must give values f32 can hold. */
static int check_finite(F64 *r, const Stmt *s, const Operands *ops, bool inputs_finite) {
  if (!inputs_finite) return 0;
  View d = ops->v[0];
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) {
      double x = *at(d, i, j);
      if (isfinite(x) && fabs(x) <= FLT_MAX) continue;
      const char *what = isnan(x)   ? "NaN"
                         : isinf(x) ? "Inf"
                                    : arena_printf(r->p->arena, "%g, which overflows f32 to Inf,", x);
      return fail(r, s->op_span,
                  arena_printf(r->p->arena, "'%s' produces %s from finite inputs, at [%" PRId64 ", %" PRId64
                               "] of '%s'", s->op_name, what, i, j, s->operands[0].name));
    }
  return 0;
}

/* ---- The ops, from their definitions. */

static double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* d[i,j] = f(a[i,j], b) for the elementwise ops; b is the immediate, or
 * the second tile's element, or its row or column broadcast. */
static double elementwise(int op, double a, double b) {
  switch (op) {
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: return a;
  case BFRT_SCALE: return a * b;
  case BFRT_EXP: return exp(a);
  case BFRT_RELU: return a > 0 ? a : 0;
  case BFRT_TANH: return tanh(a);
  case BFRT_RSQRT: return 1 / sqrt(a);
  case BFRT_RECIP: return 1 / a;
  case BFRT_SIGMOID: return 1 / (1 + exp(-a));
  case BFRT_GELU: return gelu_tanh(a);
  case BFRT_SILU: return a / (1 + exp(-a));
  case BFRT_SQUARE: return a * a;
  case BFRT_SQRT: return sqrt(a);
  case BFRT_ABS: return fabs(a);
  case BFRT_ADD: case BFRT_ADD_ROW: case BFRT_ADD_COL: case BFRT_ADD_IMM: return a + b;
  case BFRT_SUB: case BFRT_SUB_ROW: case BFRT_SUB_COL: case BFRT_SUB_IMM: return a - b;
  case BFRT_MUL: case BFRT_MUL_ROW: case BFRT_MUL_COL: case BFRT_MUL_IMM: return a * b;
  case BFRT_MAX: case BFRT_MAX_IMM: return a > b ? a : b;
  default: bug("reference_f64: op %d is not elementwise", op);
  }
}

/* The value op combines with a[i,j] besides a itself. */
static double second(int op, const Operands *o, int64_t i, int64_t j) {
  switch (op) {
  case BFRT_ADD: case BFRT_SUB: case BFRT_MUL: case BFRT_MAX: return *at(o->v[2], i, j);
  case BFRT_ADD_ROW: case BFRT_SUB_ROW: case BFRT_MUL_ROW: return *at(o->v[2], i, 0);
  case BFRT_ADD_COL: case BFRT_SUB_COL: case BFRT_MUL_COL: return *at(o->v[2], 0, j);
  default: return o->imm;
  }
}

/* The result is computed into a scratch copy first, so a destination that
 * is also a source reads only old values. */
static void compute(F64 *r, int op, const Operands *o, View out) {
  View a = o->v[1], d = o->v[0];
  switch (op) {
  case BFRT_FILL:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = o->imm;
    return;
  case BFRT_MATMUL: case BFRT_MATMUL_ACC:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) {
        double acc = op == BFRT_MATMUL_ACC ? *at(d, i, j) : 0;
        for (int64_t k = 0; k < a.cols; k++) acc += *at(a, i, k) * *at(o->v[2], k, j);
        *at(out, i, j) = acc;
      }
    return;
  case BFRT_TRANSPOSE:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = *at(a, j, i);
    return;
  case BFRT_ROWSUM: case BFRT_ROWMAX: case BFRT_ROWSUM_SQUARE: case BFRT_ROWSUM_EXP:
    for (int64_t i = 0; i < a.rows; i++) {
      double acc = op == BFRT_ROWMAX ? -INFINITY : 0;
      for (int64_t j = 0; j < a.cols; j++) {
        double x = *at(a, i, j);
        if (op == BFRT_ROWMAX) acc = x > acc ? x : acc;
        else acc += op == BFRT_ROWSUM_SQUARE ? x * x : op == BFRT_ROWSUM_EXP ? exp(x) : x;
      }
      *at(out, i, 0) = acc;
    }
    return;
  default:
    for (int64_t i = 0; i < d.rows; i++)
      for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = elementwise(op, *at(a, i, j), second(op, o, i, j));
    (void)r;
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

static int run_instr(F64 *r, const Stmt *s) {
  Operands o;
  if (resolve(r, s, &o) || check_reads(r, s, &o)) return -1;
  View d = o.v[0];
  View out = {ARENA_ARRAY(r->p->arena, double, d.rows * d.cols + 1), d.rows, d.cols, d.cols};
  bool finite_in = inputs_finite(s, &o); /* before the destination, maybe a source, changes */
  compute(r, s->op, &o, out);
  for (int64_t i = 0; i < d.rows; i++) memcpy(at(d, i, 0), at(out, i, 0), (size_t)d.cols * sizeof(double));
  if (s->operands[0].kind == OPND_TILE) r->slot_written[s->operands[0].decl][o.slot[0]] = true;
  else mark_stored(r, s, &o);
  return check_finite(r, s, &o, finite_in);
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
  int64_t a, b;
  if (eval(r, s->cond->lhs, &a) || eval(r, s->cond->rhs, &b)) return -1;
  return run_stmts(r, cond_holds(s->cond->op, a, b) ? s->body : s->orelse);
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

/* ---- Tolerances, by accuracy class (docs/language.md, "Numerical checks").
 * u = 2^-24 is f32's unit roundoff. EXACT ops move or compare values and
 * add no error. A ROUND op adds one rounding (u), a LIBM function a few ulp
 * (glibc's expf, tanhf and sqrtf are within 1-2 ulp), and a SUM adds one
 * rounding per term, so its bound grows with the length K of the sum
 * (~K u). Errors compound along a chain of ops and grow where values
 * cancel, which the relative error's floor (2^-10 of the tensor's largest
 * value) caps: the tolerances allow ~2^4 roundings of amplification for
 * ROUND, ~2^7 for LIBM and a K of ~2^12 for SUM. */
static const double class_tolerance[BFRT_NACCS] = {
    [BFRT_ACC_EXACT] = 0,
    [BFRT_ACC_ROUND] = 0x1p-20, /* ~9.5e-7 */
    [BFRT_ACC_LIBM] = 0x1p-16,  /* ~1.5e-5 */
    [BFRT_ACC_SUM] = 0x1p-12,   /* ~2.4e-4 */
};

double reference_f64_tolerance(const Program *p) {
  double tol = 0;
  for (int i = 0; i < p->kernel->ninstrs; i++) {
    double t = class_tolerance[op_info(p->kernel->instrs[i]->op)->accuracy];
    if (t > tol) tol = t;
  }
  return tol;
}

double reference_f64_rel_err(float got, double want, double scale) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want) ? 0 : INFINITY;
  double floor = scale * 0x1p-10 > FLT_MIN ? scale * 0x1p-10 : FLT_MIN;
  double denom = fabs(want) > floor ? fabs(want) : floor;
  if (isinf(got) || isinf(want)) return got == want ? 0 : INFINITY;
  return fabs((double)got - want) / denom;
}

int reference_f64(Program *p, const int64_t *params, const RefTensor *inputs, double **results,
                  const char **err) {
  const Kernel *k = p->kernel;
  Arena *a = p->arena;
  F64 r = {p, params, ARENA_ARRAY(a, int64_t, k->nloops + 1), results, NULL,
           ARENA_ARRAY(a, bool *, k->ntensors + 1), ARENA_ARRAY(a, double *, k->ntiles + 1),
           ARENA_ARRAY(a, bool *, k->ntiles + 1), NULL};
  r.shapes = arena_alloc(a, (size_t)(k->ntensors + 1) * sizeof *r.shapes);
  for (int t = 0; t < k->ntensors; t++) {
    int64_t n = inputs[t].rows * inputs[t].cols;
    r.shapes[t][0] = inputs[t].rows;
    r.shapes[t][1] = inputs[t].cols;
    results[t] = ARENA_ARRAY(a, double, n + 1);
    for (int64_t i = 0; i < n; i++) results[t][i] = inputs[t].data[i];
    r.stored[t] = ARENA_ARRAY(a, bool, n + 1);
  }
  for (int t = 0; t < k->ntiles; t++) {
    const Tile *x = &k->tiles[t];
    r.tiles[t] = ARENA_ARRAY(a, double, x->slots * x->rows * x->cols);
    r.slot_written[t] = ARENA_ARRAY(a, bool, x->slots);
  }
  if (run_stmts(&r, k->body) || check_stored(&r)) {
    *err = r.err;
    return -1;
  }
  return 0;
}

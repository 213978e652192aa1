/* reference.c: the sequential reference executor, the ground truth.
 *
 * It runs the checked kernel exactly as the language defines it: one
 * instruction at a time, in program order, with concrete parameters. It
 * reads the AST, not the IR and not the generated C, so a bug in the
 * transform or the backend cannot hide in both the run and its reference;
 * and it computes every op with sem_apply, the one implementation the
 * runtime uses too, so correct synchronization gives bit-identical tensors.
 *
 * It has its own tiles (zeroed, like the runtime's) and works on the
 * caller's tensors. Run-time errors are reported the way the runtime words
 * them (kernel, source line, what and where): an hbm tile out of bounds, a
 * slot out of range, a division by zero. */
#include <inttypes.h>
#include <string.h>

#include "backend/backend.h"
#include "runtime/semantics.h"

static const char *const op_names[] = {
#define OP(id, name, sig, engines, shape, cls, acc) name,
#include "runtime/ops.def"
#include "transform/ir.h"
#undef OP
};

typedef struct Ref {
  Program *p;
  const int64_t *params;
  int64_t *loopvars; /* by loop id */
  RefTensor *tensors;
  float **tiles;     /* by tile: slots * rows * cols */
  const char *err;
  int64_t steps; /* instructions and loop iterations walked, against p->max_steps */
} Ref;


/* Record the first error as "kernel K, line L: message"; returns -1. */
static int fail(Ref *r, Span span, const char *message) {
  r->err = arena_printf(r->p->arena, "kernel %s, line %d: %s", r->p->kernel->name,
                        line_of(r->p, span), message);
  return -1;
}

static EvalEnv env_of(const Ref *r) {
  return (EvalEnv){r->params, r->loopvars, r->p->device_ints, r->p->device_shape, {0, 0}};
}

/* The error of a failed evaluation, worded as the runtime words it. */
static int eval_failed(Ref *r, int status, const EvalEnv *env, const Expr *bad, Span span) {
  if (status != EVAL_OUT_OF_RANGE) return fail(r, bad ? bad->span : span, "division by zero");
  return fail(r, bad->span,
              arena_printf(r->p->arena, "element %s[%" PRId64 ", %" PRId64 "] is out of bounds (%s is %" PRId64
                                        " x %" PRId64 ")",
                           bad->name, env->bad_at[0], env->bad_at[1], bad->name, env->shape[bad->index][0],
                           env->shape[bad->index][1]));
}

static int eval(Ref *r, const Expr *e, int64_t *out) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  int status = expr_eval_in(e, &env, out, &bad);
  return status ? eval_failed(r, status, &env, bad, e->span) : 0;
}

static int eval_cond(Ref *r, const Cond *c, bool *out) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  int status = cond_eval(c, &env, out, &bad);
  return status ? eval_failed(r, status, &env, bad, c->span) : 0;
}

/* ---- Operands. */

/* Where a view or slice starts along dimension d, and how far it reaches:
 * its extent, or a ragged one's max(0, min(extent, E - lo)). */
static int view_extent(Ref *r, const Operand *o, int d, int64_t *lo, int64_t *n) {
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

static int tile_view(Ref *r, const Stmt *s, const Operand *o, SemView *v) {
  const Tile *t = &r->p->kernel->tiles[o->decl];
  int64_t slot = 0;
  if (o->slot && eval(r, o->slot, &slot)) return -1;
  if (slot < 0 || slot >= t->slots)
    return fail(r, o->span,
                arena_printf(r->p->arena, "%s: slot %s[%" PRId64 "] is out of range (%" PRId64 " slots)",
                             op_names[s->op], t->name, slot, t->slots));
  int64_t lo[2] = {0, 0}, n[2], size[2] = {t->rows, t->cols};
  int64_t step[2] = {o->view ? o->nd->nstep[0] : 1, o->view ? o->nd->nstep[1] : 1}, span[2];
  for (int d = 0; d < 2; d++) {
    if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
    span[d] = n[d] > 0 ? (n[d] - 1) * step[d] + 1 : n[d]; /* a strided view's reach, within its tile (sema) */
    if (lo[d] < 0 || lo[d] > size[d] - span[d])
      return fail(r, o->span,
                  arena_printf(r->p->arena, "%s: view %" PRId64 ":%" PRId64 " of tile %s is outside its %s 0:%" PRId64,
                               op_names[s->op], lo[d], lo[d] + span[d], t->name, d ? "columns" : "partitions",
                               size[d]));
  }
  *v = (SemView){r->tiles[o->decl] + slot * t->rows * t->cols + lo[0] * t->cols + lo[1], n[0], n[1],
                 step[0] * t->cols, (int)t->type, step[1]};
  return 0;
}

/* Whether tile index idx of a dimension extent long, in units of size, fits. */
static int span_fits(int64_t idx, int64_t size, int64_t extent) {
  return idx >= 0 && size <= extent && idx <= (extent - size) / size;
}

static int out_of_bounds(Ref *r, const Stmt *s, const Operand *o, int64_t row, int64_t col,
                         const char *dim, int64_t idx, int64_t size, int64_t extent) {
  const char *verb = s->op == BFRT_STORE ? "store to" : s->op == BFRT_LOAD ? "load from" : op_names[s->op];
  const char *where;
  if (idx > INT64_MAX / size - 1 || idx < INT64_MIN / size)
    where = arena_printf(r->p->arena, "%s tile %" PRId64 " of %" PRId64 " %s", dim, idx, extent, dim);
  else
    where = arena_printf(r->p->arena, "%s %" PRId64 "..%" PRId64 " of %" PRId64, dim, idx * size,
                         idx * size + size - 1, extent);
  return fail(r, o->span,
              arena_printf(r->p->arena, "%s %s[%" PRId64 ", %" PRId64 "] is out of bounds (%s)", verb,
                           r->p->kernel->tensors[o->decl].name, row, col, where));
}

/* An element slice X[r0:r1, c0:c1], checked inside the tensor. */
static int slice_view(Ref *r, const Stmt *s, const Operand *o, SemView *v) {
  RefTensor *t = &r->tensors[o->decl];
  int64_t lo[2] = {0, 0}, n[2], size[2] = {t->rows, t->cols}, step[2] = {1, o->cstep > 1 ? o->cstep : 1};
  const char *verb = s->op == BFRT_STORE ? "store to" : s->op == BFRT_LOAD ? "load from" : op_names[s->op];
  if (o->rstep && eval(r, o->rstep, &step[0])) return -1;
  for (int d = 0; d < 2; d++) {
    if (view_extent(r, o, d, &lo[d], &n[d])) return -1;
    int64_t span = 0; /* (n - 1) * step + 1: the rows or columns its indices reach */
    if (n[d] > 0 && (step[d] < 1 || __builtin_mul_overflow(n[d] - 1, step[d], &span) || span == INT64_MAX))
      return fail(r, o->span,
                  arena_printf(r->p->arena, "%s %s: a slice of %" PRId64 " indices %" PRId64 " apart does not fit a tensor",
                               verb, r->p->kernel->tensors[o->decl].name, n[d], step[d]));
    if (n[d] > 0) span++;
    if (span > size[d] || lo[d] < 0 || lo[d] > size[d] - span)
      return fail(r, o->span,
                  arena_printf(r->p->arena, "%s %s: %s %" PRId64 ":%" PRId64 " are outside the tensor's 0:%" PRId64,
                               verb, r->p->kernel->tensors[o->decl].name, d ? "columns" : "rows", lo[d],
                               lo[d] <= INT64_MAX - span ? lo[d] + span : lo[d], size[d]));
  }
  *v = (SemView){t->data + lo[0] * t->cols + lo[1], n[0], n[1], step[0] * t->cols,
                 (int)r->p->kernel->tensors[o->decl].type, step[1]};
  return 0;
}

/* Row p of gather o, checked inside its tensor (the runtime's words). */
static int gather_row(Ref *r, const Stmt *s, const Operand *o, int64_t p, int64_t *row) {
  const Expr *bad = NULL;
  EvalEnv env = env_of(r);
  int status = gather_row_eval(o->gather, &env, p, row, &bad);
  if (status) return eval_failed(r, status, &env, bad, o->span);
  const RefTensor *t = &r->tensors[o->decl];
  if (*row >= 0 && *row < t->rows) return 0;
  int64_t at[2];
  if (eval(r, o->gather->elem->lhs, &at[0]) || eval(r, o->gather->elem->rhs, &at[1])) return -1;
  at[o->gather->axis] += p;
  return fail(r, o->span,
              arena_printf(r->p->arena,
                           "%s %s: index %s[%" PRId64 ", %" PRId64 "] = %" PRId64 " (partition %" PRId64
                           ") is outside the tensor's rows 0:%" PRId64,
                           s->op == BFRT_STORE ? "store to" : "load from", r->p->kernel->tensors[o->decl].name,
                           o->gather->name, at[0], at[1], *row, p, t->rows));
}

/* A gather or scatter: every index checked first (as the runtime does),
 * then one partition at a time in partition order, row p of the tile with
 * the tensor's row of index p (a scatter's duplicate index: the later
 * partition's row stays). */
static int run_gather(Ref *r, const Stmt *s, int hbm, SemView views[BFRT_MAX_OPERANDS], const float *imms) {
  const Operand *o = &s->operands[hbm];
  RefTensor *t = &r->tensors[o->decl];
  int64_t lo, n, row;
  if (view_extent(r, o, 1, &lo, &n)) return -1;
  if (n > t->cols || lo < 0 || lo > t->cols - n)
    return fail(r, o->span,
                arena_printf(r->p->arena, "%s %s: columns %" PRId64 ":%" PRId64 " are outside the tensor's 0:%" PRId64,
                             s->op == BFRT_STORE ? "store to" : "load from", r->p->kernel->tensors[o->decl].name, lo,
                             lo + n, t->cols));
  for (int64_t p = 0; p < o->gather->n; p++)
    if (gather_row(r, s, o, p, &row)) return -1;
  SemView tile = views[1 - hbm];
  for (int64_t p = 0; p < o->gather->n; p++) {
    gather_row(r, s, o, p, &row);
    views[1 - hbm] = (SemView){tile.data + p * tile.stride, 1, tile.cols, tile.stride, tile.dtype, tile.cstride};
    views[hbm] = (SemView){t->data + row * t->cols + lo, 1, n, t->cols, (int)r->p->kernel->tensors[o->decl].type, 0};
    sem_apply(s->op, views, imms);
  }
  return 0;
}

/* hbm tile X[row, col], in units of the other operand's shape, or a slice. */
static int hbm_view(Ref *r, const Stmt *s, const Operand *o, SemView unit, SemView *v) {
  if (o->view) return slice_view(r, s, o, v);
  RefTensor *t = &r->tensors[o->decl];
  int64_t row, col;
  if (eval(r, o->row, &row) || eval(r, o->col, &col)) return -1;
  if (!span_fits(row, unit.rows, t->rows))
    return out_of_bounds(r, s, o, row, col, "rows", row, unit.rows, t->rows);
  if (!span_fits(col, unit.cols, t->cols))
    return out_of_bounds(r, s, o, row, col, "cols", col, unit.cols, t->cols);
  *v = (SemView){t->data + row * unit.rows * t->cols + col * unit.cols, unit.rows, unit.cols, t->cols,
                 (int)r->p->kernel->tensors[o->decl].type, 0};
  return 0;
}

/* Whether an operand of s is a ragged view or slice, whose extent is known
 * only now: sema checked every other shape. */
static bool ragged(const Stmt *s) {
  for (int i = 0; i < s->noperands; i++)
    if (s->operands[i].clip[0] || s->operands[i].clip[1]) return true;
  return false;
}

/* The op's shape rule (docs/language.md, "Ops") over the views as run. */
static bool shapes_fit(const Stmt *s, const SemView v[BFRT_MAX_OPERANDS]) {
  bool same01 = v[0].rows == v[1].rows && v[0].cols == v[1].cols;
  switch (op_info(s->op)->shape) {
  case SHAPE_SAME:
    return same01 && (s->noperands < 3 || s->operands[2].kind == OPND_IMM ||
                      (v[0].rows == v[2].rows && v[0].cols == v[2].cols));
  case SHAPE_MATMUL: return v[0].rows == v[1].rows && v[1].cols == v[2].rows && v[0].cols == v[2].cols;
  case SHAPE_TRANSPOSE: return v[0].rows == v[1].cols && v[0].cols == v[1].rows;
  case SHAPE_ROWREDUCE: return v[0].rows == v[1].rows && v[0].cols == 1;
  case SHAPE_ROWBCAST: return same01 && v[2].rows == v[0].rows && v[2].cols == 1;
  case SHAPE_COLBCAST: return same01 && v[2].rows == 1 && v[2].cols == v[0].cols;
  default: return true;
  }
}

/* ---- Statements. */

/* Count one step; fails at the program's step limit. */
static int count_step(Ref *r, Span span) {
  return ++r->steps > r->p->max_steps ? fail(r, span, steps_exceeded(r->p)) : 0;
}

static int run_instr(Ref *r, const Stmt *s) {
  if (count_step(r, s->span)) return -1;
  SemView views[BFRT_MAX_OPERANDS] = {{0}};
  float imms[BFRT_MAX_OPERANDS] = {0};
  int hbm = -1;
  for (int i = 0; i < s->noperands && i < BFRT_MAX_OPERANDS; i++) {
    const Operand *o = &s->operands[i];
    if (o->kind == OPND_TILE && tile_view(r, s, o, &views[i])) return -1;
    if (o->kind == OPND_HBM) hbm = i;
    if (o->kind == OPND_IMM) imms[i] = o->imm;
  }
  if (hbm >= 0 && s->operands[hbm].gather) return run_gather(r, s, hbm, views, imms);
  if (hbm >= 0 && hbm_view(r, s, &s->operands[hbm], views[1 - hbm], &views[hbm])) return -1;
  if (ragged(s) && !shapes_fit(s, views)) {
    const char *shapes = "";
    for (int i = 0; i < s->noperands && i < BFRT_MAX_OPERANDS; i++)
      if (s->operands[i].kind != OPND_IMM)
        shapes = arena_printf(r->p->arena, "%s%s[%" PRId64 ", %" PRId64 "]", shapes, *shapes ? ", " : "",
                              views[i].rows, views[i].cols);
    return fail(r, s->span,
                arena_printf(r->p->arena, "%s: operand shapes do not fit the op (%s)", op_names[s->op], shapes));
  }
  sem_apply(s->op, views, imms);
  return 0;
}

static int run_stmts(Ref *r, const Stmt *s);

/* for var in lo .. hi { body }: bounds evaluated once, at entry. */
static int run_for(Ref *r, const Stmt *s) {
  int64_t lo, hi;
  if (eval(r, s->lo, &lo) || eval(r, s->hi, &hi)) return -1;
  if (ir_trips(lo, hi) > IR_MAX_TRIPS)
    return fail(r, s->span,
                arena_printf(r->p->arena,
                             "loop runs %" PRIu64 " iterations (%" PRId64 " .. %" PRId64
                             "), more than 64-bit counters can count",
                             ir_trips(lo, hi), lo, hi));
  for (int64_t i = lo; i < hi; i++) {
    r->loopvars[s->loop_id] = i;
    if (count_step(r, s->span) || run_stmts(r, s->body)) return -1;
  }
  return 0;
}

/* if (cond) { body } else { orelse } */
static int run_if(Ref *r, const Stmt *s) {
  bool holds;
  if (eval_cond(r, s->cond, &holds)) return -1;
  return run_stmts(r, holds ? s->body : s->orelse);
}

static int run_stmts(Ref *r, const Stmt *s) {
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

/* ---- Entry points. */

int reference_shapes(Program *p, const int64_t *params, RefTensor *tensors, const char **err) {
  Ref r = {p, params, NULL, tensors, NULL, NULL, 0};
  const Kernel *k = p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    const Tensor *x = &k->tensors[t];
    if (eval(&r, x->rows, &tensors[t].rows) || eval(&r, x->cols, &tensors[t].cols)) {
      *err = r.err;
      return -1;
    }
    if (tensors[t].rows < 0 || tensors[t].cols < 0) {
      fail(&r, x->span,
           arena_printf(p->arena, "tensor %s has a negative shape [%" PRId64 ", %" PRId64 "]", x->name,
                        tensors[t].rows, tensors[t].cols));
      *err = r.err;
      return -1;
    }
  }
  return 0;
}

int reference_run(Program *p, const int64_t *params, RefTensor *tensors, const char **err) {
  const Kernel *k = p->kernel;
  Ref r = {p, params, ARENA_ARRAY(p->arena, int64_t, k->nloops + 1), tensors,
           ARENA_ARRAY(p->arena, float *, k->ntiles + 1), NULL, 0};
  for (int t = 0; t < k->ntiles; t++)
    r.tiles[t] = ARENA_ARRAY(p->arena, float, k->tiles[t].slots * k->tiles[t].rows * k->tiles[t].cols);
  if (run_stmts(&r, k->body)) {
    *err = r.err;
    return -1;
  }
  return 0;
}

void device_ints_bind(Program *p, const RefTensor *tensors) {
  const Kernel *k = p->kernel;
  const void **ints = ARENA_ARRAY(p->arena, const void *, k->ntensors + 1);
  typedef int64_t Pair[2];
  Pair *shape = ARENA_ARRAY(p->arena, Pair, k->ntensors + 1);
  for (int t = 0; t < k->ntensors; t++) {
    ints[t] = k->tensors[t].ints ? tensors[t].data : NULL;
    shape[t][0] = tensors[t].rows;
    shape[t][1] = tensors[t].cols;
  }
  p->device_ints = ints;
  p->device_shape = (const int64_t(*)[2])shape;
}

void device_ints_json(const Program *p, JsonWriter *w) {
  const Kernel *k = p->kernel;
  bool any = false;
  for (int t = 0; t < k->ntensors; t++) {
    if (!k->tensors[t].ints || !p->device_ints) continue;
    if (!any) {
      jw_key(w, "device");
      jw_object(w);
      any = true;
    }
    jw_key(w, k->tensors[t].name);
    jw_array(w);
    int64_t n = p->device_shape[t][0] * p->device_shape[t][1];
    for (int64_t i = 0; i < n; i++) {
      int32_t v;
      memcpy(&v, (const char *)p->device_ints[t] + 4 * i, sizeof v);
      jw_int(w, v);
    }
    jw_close(w);
  }
  if (any) jw_close(w);
}

/* kernel.c: the calls generated engine functions make, shared by every
 * executor.
 *
 * An op is checked before it runs: the op exists, its operands have the
 * kinds and shapes ops.def gives it, every tile slot is in range, every
 * hbm tile lies inside its tensor and every row a gather or scatter names
 * by index is one of its tensor's (a gather or scatter then runs one
 * partition at a time, in partition order). A generated kernel passes these checks
 * by construction except for hbm coordinates and slots computed at run
 * time, which is why the checks stay on: a bad coordinate is reported with
 * the kernel, line, tensor and coordinates instead of corrupting memory.
 * Then sem_apply runs (not on a timing-only instance, whose float tensors
 * and tiles hold no data) and the executor counts the completion, after
 * the effects (the memory contract of docs/runtime.md). An engine that
 * issues more than opt->max_instructions ops fails the run.
 *
 * Waits, barriers and bookkeeping only record what the engine is doing and
 * hand over to the executor's hooks. When the run has a race checker, it
 * sees every op's accesses before the op runs, every completion before it
 * is counted, and every wait and barrier after it returns.
 *
 * The counter window (docs/algorithm.md, section 7). An engine reads a
 * counter's low counter_bits bits and extends them from the count it last
 * saw of that counter (seen), exact while the counter is less than
 * 2^counter_bits past it. Every engine reads every counter it tracks at
 * each instruction boundary (before an op, entering a wait), and while it
 * is blocked it keeps reading them. A producer holds an op until each of
 * its consumers has seen enough of its counter for the op to keep the
 * window (rt_holder), or is blocked. rt_read_counters checks the window on
 * every read the emulation makes, with the true count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* ---- Operands. */

/* The runtime's operand kind of a signature letter (ops.h). */
static int arg_kind(char letter) {
  return letter == 'T' ? BFRT_ARG_TILE : letter == 'H' ? BFRT_ARG_HBM : BFRT_ARG_IMM;
}

/* The one slot check, for ops and for the bookkeeping that tracks them. */
static const bfrt_tile_desc *check_slot(Ctx *cx, int line, int op, int tile, int64_t slot) {
  const bfrt_kernel *k = cx->rt->k;
  const char *name = op >= 0 && op < BFRT_NOPS ? rt_ops[op].name : "op";
  if (tile < 0 || tile >= k->ntiles) rt_fail(cx, line, "%s: tile %d does not exist", name, tile);
  const bfrt_tile_desc *d = &k->tiles[tile];
  if (slot < 0 || slot >= d->slots)
    rt_fail(cx, line, "%s: slot %s[%lld] is out of range (%lld slots)", name, d->name,
            (long long)slot, (long long)d->slots);
  return d;
}

/* The one view check: at .. at + n - 1 inside a dimension of size. */
static void check_view_dim(Ctx *cx, int line, int op, const bfrt_tile_desc *d, int dim, int64_t at, int64_t n) {
  int64_t size = dim ? d->cols : d->rows;
  if (n < 0 || n > size || at < 0 || at > size - n)
    rt_fail(cx, line, "%s: view %lld:%lld of tile %s is outside its %s 0:%lld",
            op >= 0 && op < BFRT_NOPS ? rt_ops[op].name : "op", (long long)at,
            (long long)(n >= 0 && at <= INT64_MAX - n ? at + n : at), d->name, dim ? "columns" : "partitions",
            (long long)size);
}

static SemView tile_view(Ctx *cx, int line, int op, const bfrt_arg *a) {
  const bfrt_tile_desc *d = check_slot(cx, line, op, a->id, a->a);
  float *base = cx->rt->tiles[a->id] + a->a * d->rows * d->cols;
  if (!a->view) return (SemView){base, d->rows, d->cols, d->cols, d->dtype};
  check_view_dim(cx, line, op, d, 0, a->r0, a->rn);
  check_view_dim(cx, line, op, d, 1, a->c0, a->cn);
  return (SemView){base + a->r0 * d->cols + a->c0, a->rn, a->cn, d->cols, d->dtype};
}

/* Whether tile index idx of extent-long dimension in units of size fits. */
static int span_fits(int64_t idx, int64_t size, int64_t extent) {
  return idx >= 0 && size <= extent && idx <= (extent - size) / size;
}

_Noreturn static void out_of_bounds(Ctx *cx, int line, int op, const bfrt_arg *a, const char *dim,
                                    int64_t idx, int64_t size, int64_t extent) {
  const char *verb = op == BFRT_STORE ? "store to" : op == BFRT_LOAD ? "load from" : rt_ops[op].name;
  const char *tensor = cx->rt->k->tensors[a->id].name;
  if (idx > INT64_MAX / size - 1 || idx < INT64_MIN / size)
    rt_fail(cx, line, "%s %s[%lld, %lld] is out of bounds (%s tile %lld of %lld %s)", verb, tensor,
            (long long)a->a, (long long)a->b, dim, (long long)idx, (long long)extent, dim);
  rt_fail(cx, line, "%s %s[%lld, %lld] is out of bounds (%s %lld..%lld of %lld)", verb, tensor,
          (long long)a->a, (long long)a->b, dim, (long long)(idx * size),
          (long long)(idx * size + size - 1), (long long)extent);
}

/* The one element-slice check: at .. at + n - 1 inside a dimension of the tensor. */
static void check_slice_dim(Ctx *cx, int line, int op, int tensor, int dim, int64_t at, int64_t n) {
  const bfrt_kernel *k = cx->rt->k;
  const char *name = op >= 0 && op < BFRT_NOPS ? rt_ops[op].name : "op";
  if (tensor < 0 || tensor >= k->ntensors) rt_fail(cx, line, "%s: tensor %d does not exist", name, tensor);
  const Tensor *t = &cx->rt->tensors[tensor];
  int64_t size = dim ? t->cols : t->rows;
  const char *verb = op == BFRT_STORE ? "store to" : op == BFRT_LOAD ? "load from" : name;
  if (n < 0 || n > size || at < 0 || at > size - n)
    rt_fail(cx, line, "%s %s: %s %lld:%lld are outside the tensor's 0:%lld", verb, k->tensors[tensor].name,
            dim ? "columns" : "rows", (long long)at, (long long)(n >= 0 && at <= INT64_MAX - n ? at + n : at),
            (long long)size);
}

int64_t rt_gather_row(const Ctx *cx, const bfrt_arg *a, int64_t p) {
  const Tensor *x = &cx->rt->tensors[a->gi];
  int64_t r = a->gr + (a->gaxis ? 0 : p), c = a->gc + (a->gaxis ? p : 0);
  int32_t v; /* i32 elements live in the tensor's float-sized cells */
  memcpy(&v, x->data + r * x->cols + c, sizeof v);
  return v;
}

/* A gather's or scatter's rows: its run of the index tensor inside that
 * tensor, and every index a row of the tensor moved. */
static void check_gather(Ctx *cx, int line, int op, const bfrt_arg *a) {
  const bfrt_kernel *k = cx->rt->k;
  const char *verb = op == BFRT_STORE ? "store to" : "load from";
  if (a->gi < 0 || a->gi >= k->ntensors || k->tensors[a->gi].dtype != BFRT_DTYPE_I32)
    rt_fail(cx, line, "%s %s: index tensor %d is not an i32 tensor", verb, k->tensors[a->id].name, a->gi);
  const Tensor *x = &cx->rt->tensors[a->gi];
  int64_t size = a->gaxis ? x->cols : x->rows, at = a->gaxis ? a->gc : a->gr, other = a->gaxis ? a->gr : a->gc;
  if (a->rn < 0 || a->rn > size || at < 0 || at > size - a->rn || other < 0 || other >= (a->gaxis ? x->rows : x->cols))
    rt_fail(cx, line, "%s %s: its indices %s[%lld%s, %lld%s] are outside the index tensor (%lld x %lld)", verb,
            k->tensors[a->id].name, k->tensors[a->gi].name, (long long)a->gr, a->gaxis ? "" : " + p",
            (long long)a->gc, a->gaxis ? " + p" : "", (long long)x->rows, (long long)x->cols);
  const Tensor *t = &cx->rt->tensors[a->id];
  for (int64_t p = 0; p < a->rn; p++) {
    int64_t row = rt_gather_row(cx, a, p);
    if (row < 0 || row >= t->rows)
      rt_fail(cx, line, "%s %s: index %s[%lld, %lld] = %lld (partition %lld) is outside the tensor's rows 0:%lld",
              verb, k->tensors[a->id].name, k->tensors[a->gi].name, (long long)(a->gr + (a->gaxis ? 0 : p)),
              (long long)(a->gc + (a->gaxis ? p : 0)), (long long)row, (long long)p, (long long)t->rows);
  }
}

/* hbm tile X[r, c] in units of the other operand's shape, or an element slice. */
static SemView hbm_view(Ctx *cx, int line, int op, const bfrt_arg *a, SemView unit) {
  const bfrt_kernel *k = cx->rt->k;
  if (a->id < 0 || a->id >= k->ntensors)
    rt_fail(cx, line, "%s: tensor %d does not exist", rt_ops[op].name, a->id);
  const Tensor *t = &cx->rt->tensors[a->id];
  if (a->view == 2) { /* rows by index: the view of its first row, rn rows tall, for the shape rule */
    check_slice_dim(cx, line, op, a->id, 1, a->b, a->cn);
    check_gather(cx, line, op, a);
    return (SemView){t->data + a->b, a->rn, a->cn, t->cols, k->tensors[a->id].dtype};
  }
  if (a->view) {
    check_slice_dim(cx, line, op, a->id, 0, a->a, a->rn);
    check_slice_dim(cx, line, op, a->id, 1, a->b, a->cn);
    return (SemView){t->data + a->a * t->cols + a->b, a->rn, a->cn, t->cols, k->tensors[a->id].dtype};
  }
  if (!span_fits(a->a, unit.rows, t->rows)) out_of_bounds(cx, line, op, a, "rows", a->a, unit.rows, t->rows);
  if (!span_fits(a->b, unit.cols, t->cols)) out_of_bounds(cx, line, op, a, "cols", a->b, unit.cols, t->cols);
  float *base = t->data + a->a * unit.rows * t->cols + a->b * unit.cols;
  return (SemView){base, unit.rows, unit.cols, t->cols, k->tensors[a->id].dtype};
}

static int same_shape(SemView a, SemView b) { return a.rows == b.rows && a.cols == b.cols; }

/* v[i] is [rows, 1]: one value per partition. */
static int per_row(SemView v, int64_t rows) { return v.rows == rows && v.cols == 1; }

/* The tile operands a role letter marks as [P, 1] scalars: tensor_scalar's
 * vector operands, activation's bias and accumulator, a scan's initial. */
static int scalars_fit(int op, const SemView *v, int from) {
  const char *kinds = rt_ops[op].operands;
  for (int i = from; kinds[i]; i++)
    if (kinds[i] == 'T' && !per_row(v[i], v[0].rows)) return 0;
  return 1;
}

static int shapes_fit(int op, const SemView *v) {
  int sig = rt_ops[op].sig;
  switch (rt_ops[op].shape) {
  case SHAPE_SAME: return same_shape(v[0], v[1]) && (sig != SIG_T_TT || same_shape(v[0], v[2]));
  case SHAPE_MATMUL: return v[0].rows == v[1].rows && v[1].cols == v[2].rows && v[0].cols == v[2].cols;
  case SHAPE_NC_MATMUL: return v[1].rows == v[2].rows && v[0].rows == v[1].cols && v[0].cols == v[2].cols;
  case SHAPE_TRANSPOSE: return v[0].rows == v[1].cols && v[0].cols == v[1].rows;
  case SHAPE_ROWREDUCE: return per_row(v[0], v[1].rows);
  case SHAPE_ROWREDUCE_OF: return per_row(v[0], v[2].rows);
  case SHAPE_ROWBCAST: return same_shape(v[0], v[1]) && per_row(v[2], v[0].rows);
  case SHAPE_COLBCAST: return same_shape(v[0], v[1]) && v[2].rows == 1 && v[2].cols == v[0].cols;
  case SHAPE_SCALAR: return same_shape(v[0], v[1]) && scalars_fit(op, v, 2);
  case SHAPE_ACTIVATION: return same_shape(v[0], v[2]) && scalars_fit(op, v, 3);
  case SHAPE_SCAN: return same_shape(v[0], v[1]) && same_shape(v[0], v[2]) && scalars_fit(op, v, 3);
  case SHAPE_SELECT: return same_shape(v[0], v[4]);
  case SHAPE_BN_STATS: return v[0].rows == v[1].rows && v[0].cols == 6;
  case SHAPE_BN_AGGR: return v[0].rows == v[1].rows && v[0].cols == 2 && v[1].cols % 3 == 0;
  default: return 1;
  }
}

/* Fill cx->views and cx->imms from args (a view's data is NULL for an
 * immediate, an immediate 0 for a view). */
static void resolve(Ctx *cx, int op, int line, int nargs, const bfrt_arg *args) {
  if (op < 0 || op >= BFRT_NOPS) rt_fail(cx, line, "unknown op %d", op);
  const char *kinds = rt_ops[op].operands;
  int n = (int)strlen(kinds), hbm = -1;
  if (nargs != n) rt_fail(cx, line, "%s takes %d operands, not %d", rt_ops[op].name, n, nargs);
  for (int i = 0; i < n; i++) {
    if (args[i].kind != arg_kind(kinds[i]))
      rt_fail(cx, line, "%s: operand %d has the wrong kind", rt_ops[op].name, i);
    cx->views[i] = (SemView){0};
    cx->imms[i] = 0.0f;
    if (args[i].kind == BFRT_ARG_TILE) cx->views[i] = tile_view(cx, line, op, &args[i]);
    if (args[i].kind == BFRT_ARG_HBM) hbm = i;
    if (args[i].kind == BFRT_ARG_IMM) cx->imms[i] = args[i].imm;
  }
  if (hbm >= 0) cx->views[hbm] = hbm_view(cx, line, op, &args[hbm], cx->views[1 - hbm]);
  cx->gathered = hbm >= 0 && args[hbm].view == 2 ? hbm + 1 : 0;
  if (!shapes_fit(op, cx->views)) {
    char shapes[160] = "";
    for (int i = 0, len = 0; i < n && len < (int)sizeof shapes; i++)
      if (args[i].kind != BFRT_ARG_IMM)
        len += snprintf(shapes + len, sizeof shapes - (size_t)len, "%s[%lld, %lld]", len ? ", " : "",
                        (long long)cx->views[i].rows, (long long)cx->views[i].cols);
    rt_fail(cx, line, "%s: operand shapes do not fit the op (%s)", rt_ops[op].name, shapes);
  }
}

/* ---- The counter window. */

void rt_saw(bfrt *rt, int consumer, int producer, int64_t count) {
  _Atomic int64_t *seen = &rt->seen[consumer][producer];
  int64_t old = atomic_load(seen);
  while (old < count && !atomic_compare_exchange_weak(seen, &old, count)) {
  }
}

void rt_forget_seen(bfrt *rt) {
  for (int c = 0; c < BFRT_MAX_ENGINES; c++)
    for (int e = 0; e < BFRT_MAX_ENGINES; e++) atomic_store(&rt->seen[c][e], 0);
}

void rt_read(Ctx *cx, int e) {
  bfrt *rt = cx->rt;
  int bits = rt_counter_bits(rt);
  int64_t count = rt->exec->count(cx, e), seen = atomic_load(&rt->seen[cx->engine][e]);
  if (count <= seen) return; /* it has seen as much: nothing to extend */
  if (bfrt_counter_extend(seen, rt_counter_raw(rt, count), bits) != count)
    rt_fail(cx, cx->line, "counter window: %s reads %s's counter at %lld, 2^%d or more past the %lld it last saw",
            rt->k->engine_names[cx->engine], rt->k->engine_names[e], (long long)count, bits, (long long)seen);
  rt_saw(rt, cx->engine, e, count);
}

void rt_read_counters(Ctx *cx) {
  for (int e = 0; e < cx->rt->k->nengines; e++)
    if (cx->rt->consumers[e] >> cx->engine & 1) rt_read(cx, e);
}

int rt_holder(Ctx *cx, int64_t own, int64_t next) {
  bfrt *rt = cx->rt;
  int64_t need = next - rt_counter_span(rt);
  for (int c = 0; c < rt->k->nengines; c++) {
    if (!(rt->consumers[cx->engine] >> c & 1) || atomic_load(&rt->seen[c][cx->engine]) >= need) continue;
    if (!rt->exec->idle(cx, c)) return c;
    rt_saw(rt, c, cx->engine, own);
    if (atomic_load(&rt->seen[c][cx->engine]) < need) return c;
  }
  return -1;
}

/* ---- The calls. */

/* The op's effects: sem_apply over the resolved views; a gather or scatter
 * one partition at a time, row p of the tile with row rt_gather_row(p) of
 * the tensor, in partition order (a scatter's duplicate index: the later
 * partition's row stays, as in the references). */
static void apply(Ctx *cx, int op, int nargs, const bfrt_arg *args) {
  int hbm = -1;
  for (int i = 0; i < nargs; i++)
    if (args[i].kind == BFRT_ARG_HBM && args[i].view == 2) hbm = i;
  if (hbm < 0) {
    sem_apply(op, cx->views, cx->imms);
    return;
  }
  SemView whole[BFRT_MAX_OPERANDS], row[BFRT_MAX_OPERANDS];
  memcpy(whole, cx->views, sizeof whole);
  const Tensor *t = &cx->rt->tensors[args[hbm].id];
  for (int64_t p = 0; p < args[hbm].rn; p++) {
    memcpy(row, whole, sizeof row);
    for (int i = 0; i < nargs; i++)
      if (args[i].kind == BFRT_ARG_TILE) row[i] = (SemView){whole[i].data + p * whole[i].stride, 1, whole[i].cols, whole[i].stride, whole[i].dtype};
    row[hbm] = (SemView){t->data + rt_gather_row(cx, &args[hbm], p) * t->cols + args[hbm].b, 1, args[hbm].cn, t->cols, whole[hbm].dtype};
    sem_apply(op, row, cx->imms);
  }
}

void bfrt_op(Ctx *cx, int op, int line, int nargs, const bfrt_arg *args) {
  bfrt *rt = cx->rt;
  if (rt_failed(rt)) rt_unwind(cx);
  resolve(cx, op, line, nargs, args);
  cx->op = op;
  cx->line = line;
  if (rt->checker) check_op(cx, op, args, nargs);
  rt_read_counters(cx);
  rt->exec->before_op(cx);
  int64_t start = trace_now(cx);
  if (!rt->timing_only) apply(cx, op, nargs, args);
  if (++cx->completed > rt->opt->max_instructions && rt->opt->max_instructions > 0)
    rt_fail(cx, line, "engine %s runs more than %lld instructions (the run's limit)", rt->k->engine_names[cx->engine],
            (long long)rt->opt->max_instructions);
  if (rt->checker) check_complete(cx);
  rt->exec->complete(cx);
  trace_record_op(cx, op, line, nargs, start); /* after complete: a simulator's clock moves there */
}

void bfrt_wait(Ctx *cx, int engine, int64_t threshold, int line) {
  bfrt *rt = cx->rt;
  if (rt_failed(rt)) rt_unwind(cx);
  if (engine < 0 || engine >= rt->k->nengines)
    rt_fail(cx, line, "wait on engine %d, which does not exist", engine);
  cx->op = TRACE_WAIT;
  cx->line = line;
  cx->waits++;
  int64_t start = trace_now(cx);
  rt_read_counters(cx);
  rt_read(cx, engine);
  rt->exec->wait(cx, engine, threshold);
  if (rt->checker) check_wait(cx, engine, threshold);
  trace_record(cx, TRACE_WAIT, line, engine, threshold, start);
}

void bfrt_barrier(Ctx *cx, int line) {
  bfrt *rt = cx->rt;
  if (rt_failed(rt)) rt_unwind(cx);
  cx->op = TRACE_BARRIER;
  cx->line = line;
  int64_t start = trace_now(cx);
  rt->exec->barrier(cx);
  if (rt->checker) check_barrier(cx);
  cx->barriers++;
  trace_record(cx, TRACE_BARRIER, line, -1, 0, start);
}

void bfrt_bookkeep(Ctx *cx, int64_t n) {
  cx->bookkeeping += n;
  if (cx->rt->exec->bookkeep) cx->rt->exec->bookkeep(cx, n);
}

/* A scratch load or store costs what a bookkeeping operation costs: the
 * tracking arrays are in the same scratch, and their accesses are
 * bookkeeping operations (assumption: one sequencer operation each). */
void bfrt_spill(Ctx *cx, int64_t n) {
  cx->spills += n;
  if (cx->rt->exec->bookkeep) cx->rt->exec->bookkeep(cx, n);
}

int64_t bfrt_elem(Ctx *cx, int tensor, int64_t row, int64_t col, int line) {
  const bfrt_kernel *k = cx->rt->k;
  if (tensor < 0 || tensor >= k->ntensors) rt_fail(cx, line, "tensor %d does not exist", tensor);
  const Tensor *t = &cx->rt->tensors[tensor];
  const char *name = k->tensors[tensor].name;
  if (row < 0 || row >= t->rows || col < 0 || col >= t->cols)
    rt_fail(cx, line, "element %s[%lld, %lld] is out of bounds (%s is %lld x %lld)", name, (long long)row,
            (long long)col, name, (long long)t->rows, (long long)t->cols);
  if (cx->rt->exec->device_read) cx->rt->exec->device_read(cx);
  int32_t v; /* i32 elements live in the tensor's float-sized cells */
  memcpy(&v, t->data + row * t->cols + col, sizeof v);
  return v;
}

static void check_divisor(Ctx *cx, int64_t a, int64_t b, int line) {
  if (b == 0) rt_fail(cx, line, "division by zero (%lld / 0)", (long long)a);
}

/* The language's floor division and modulo (docs/language.md): a / -1 is
 * -a, wrapping (INT64_MIN / -1 is INT64_MIN), and a % -1 is 0, as in the
 * reference executor and the oracle; C's a / b would trap there. */
int64_t bfrt_div(Ctx *cx, int64_t a, int64_t b, int line) {
  check_divisor(cx, a, b, line);
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  return a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;
}

int64_t bfrt_mod(Ctx *cx, int64_t a, int64_t b, int line) {
  check_divisor(cx, a, b, line);
  if (b == -1) return 0; /* INT64_MIN % -1 would trap */
  int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

int64_t bfrt_slot(Ctx *cx, int op, int tile, int64_t slot, int line) {
  if (rt_failed(cx->rt)) rt_unwind(cx);
  check_slot(cx, line, op, tile, slot);
  return slot;
}

int64_t bfrt_view_at(Ctx *cx, int op, int tile, int dim, int64_t at, int64_t n, int line) {
  if (rt_failed(cx->rt)) rt_unwind(cx);
  check_view_dim(cx, line, op, check_slot(cx, line, op, tile, 0), dim, at, n);
  return at;
}

int64_t bfrt_hbm_at(Ctx *cx, int op, int tensor, int dim, int64_t at, int64_t n, int line) {
  if (rt_failed(cx->rt)) rt_unwind(cx);
  check_slice_dim(cx, line, op, tensor, dim, at, n);
  return at;
}

int64_t bfrt_hbm_row(Ctx *cx, int op, int tensor, int tile, int64_t row, int64_t col, int line) {
  if (rt_failed(cx->rt)) rt_unwind(cx);
  const bfrt_tile_desc *d = check_slot(cx, line, op, tile, 0);
  bfrt_arg a = {.kind = BFRT_ARG_HBM, .id = tensor, .a = row, .b = col};
  hbm_view(cx, line, op, &a, (SemView){NULL, d->rows, d->cols, d->cols, d->dtype});
  return row;
}

/* The rows of an IX_ROWS set, checked (the op's own errors): into *count
 * of them, the first at *first for a run (gi < 0); a gather's through
 * rt_gather_row of the argument it builds in *g. */
static void rows_of(Ctx *cx, int tensor, int gi, int axis, int64_t a, int64_t b, int64_t n, int op, int line,
                    bfrt_arg *g, int64_t *count) {
  if (rt_failed(cx->rt)) rt_unwind(cx);
  if (gi < 0) {
    *count = b < 0 ? 0 : b > n ? n : b;
    check_slice_dim(cx, line, op, tensor, 0, a, *count);
    return;
  }
  *g = (bfrt_arg){.kind = BFRT_ARG_HBM, .id = tensor, .view = 2, .rn = n, .gi = gi, .gaxis = axis, .gr = a, .gc = b};
  check_gather(cx, line, op, g);
  *count = n;
}

int64_t bfrt_rows_max(Ctx *cx, const int64_t *arr, int tensor, int gi, int axis, int64_t a, int64_t b, int64_t n,
                      int64_t c0, int64_t kc, int64_t ncols, int op, int line) {
  bfrt_arg g;
  int64_t count, most = 0;
  rows_of(cx, tensor, gi, axis, a, b, n, op, line, &g, &count);
  for (int64_t p = 0; p < count; p++) {
    const int64_t *row = arr + (gi < 0 ? a + p : rt_gather_row(cx, &g, p)) * ncols + c0;
    for (int64_t j = 0; j < kc; j++)
      if (row[j] > most) most = row[j];
  }
  return most;
}

void bfrt_rows_store(Ctx *cx, int64_t *arr, int64_t value, int tensor, int gi, int axis, int64_t a, int64_t b,
                     int64_t n, int64_t c0, int64_t kc, int64_t ncols, int op, int line) {
  bfrt_arg g;
  int64_t count;
  rows_of(cx, tensor, gi, axis, a, b, n, op, line, &g, &count);
  for (int64_t p = 0; p < count; p++) {
    int64_t *row = arr + (gi < 0 ? a + p : rt_gather_row(cx, &g, p)) * ncols + c0;
    for (int64_t j = 0; j < kc; j++) row[j] = value;
  }
}

int64_t bfrt_loop(Ctx *cx, int64_t lo, int64_t hi, int line) {
  uint64_t trips = hi > lo ? (uint64_t)hi - (uint64_t)lo : 0;
  if (trips > (uint64_t)INT64_MAX)
    rt_fail(cx, line, "loop runs %llu iterations (%lld .. %lld), more than 64-bit counters can count",
            (unsigned long long)trips, (long long)lo, (long long)hi);
  return hi;
}

int64_t *bfrt_scratch(Ctx *cx, int64_t n) {
  if (n < 0 || (uint64_t)n > (SIZE_MAX - sizeof(Scratch)) / sizeof(int64_t) / 2)
    rt_fail(cx, 0, "a bookkeeping array of %lld counters cannot be allocated", (long long)n);
  Scratch *s = calloc(1, sizeof *s + (size_t)n * sizeof(int64_t));
  if (!s) rt_fail(cx, 0, "out of memory for a bookkeeping array of %lld counters", (long long)n);
  s->next = cx->scratch;
  cx->scratch = s;
  return s->data;
}

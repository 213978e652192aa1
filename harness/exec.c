/* exec.c: the one execute-and-compare path (see exec.h). Tensors live in
 * the program's arena, so an instance is freed with its program. */
#include "harness/exec.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/inputs.h"
#include "util/clock.h"

uint64_t run_byte_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_C(1) << 32;
  return (uint64_t)pages * (uint64_t)page / 4 * 3;
}

/* What a run keeps per element, in bytes. A tensor element: f32 copies of
 * the inputs, the reference's results, each sync mode's results and the
 * runtime's own (5 x 4), and the f64 reference's value and bound twice
 * (its cells and its results) and a stored flag (33). A tile element: the
 * reference's and the runtime's f32 and the f64 reference's cell (24). */
enum { RUN_BYTES_PER_TENSOR_ELEMENT = 53, RUN_BYTES_PER_TILE_ELEMENT = 24 };

/* Every tensor's size, in checked arithmetic, and what the run keeps of
 * them and of the tiles within run_byte_limit; 0, or -1 with a message
 * naming the sizes. */
static int check_sizes(Instance *in, const char **err) {
  const Kernel *k = in->p->kernel;
  uint64_t need = 0, limit = run_byte_limit(), largest = 0;
  int big = 0;
  for (int t = 0; t < k->ntensors; t++) {
    const RefTensor *x = &in->inputs[t];
    uint64_t elems, bytes, kept;
    if (__builtin_mul_overflow((uint64_t)x->rows, (uint64_t)x->cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)sizeof(float), &bytes) ||
        __builtin_mul_overflow(elems, (uint64_t)RUN_BYTES_PER_TENSOR_ELEMENT, &kept) ||
        __builtin_add_overflow(need, kept, &need)) {
      *err = arena_printf(in->p->arena, "tensor %s [%" PRId64 ", %" PRId64 "] is too large: its size in bytes overflows 64 bits",
                          k->tensors[t].name, x->rows, x->cols);
      return -1;
    }
    if (bytes > largest) {
      largest = bytes;
      big = t;
    }
  }
  uint64_t tile_elements = 0; /* sema bounds each tile to MAX_TILE_ELEMS */
  for (int t = 0; t < k->ntiles; t++) tile_elements += (uint64_t)(k->tiles[t].slots * k->tiles[t].rows * k->tiles[t].cols);
  if (!__builtin_add_overflow(need, tile_elements * RUN_BYTES_PER_TILE_ELEMENT, &need) && need <= limit) return 0;
  const char *largest_tensor = k->ntensors ? arena_printf(in->p->arena, " (the largest, %s [%" PRId64 ", %" PRId64 "], has %" PRIu64 " bytes of f32)",
                                                          k->tensors[big].name, in->inputs[big].rows, in->inputs[big].cols, largest)
                                           : "";
  *err = arena_printf(in->p->arena,
                      "the run needs %" PRIu64 " bytes for its tensors%s and its %" PRIu64 " tile elements: %d bytes a "
                      "tensor element (its f32 copies, and the f64 reference's value and bound) and %d a tile element; "
                      "the limit is %" PRIu64 " bytes, three quarters of this machine's memory",
                      need, largest_tensor, tile_elements, RUN_BYTES_PER_TENSOR_ELEMENT, RUN_BYTES_PER_TILE_ELEMENT, limit);
  return -1;
}

int instance_inputs(Instance *in, uint64_t seed, const char **err) {
  const Kernel *k = in->p->kernel;
  in->inputs = ARENA_ARRAY(in->p->arena, RefTensor, k->ntensors + 1);
  if (reference_shapes(in->p, in->params, in->inputs, err) || check_sizes(in, err)) return -1;
  for (int t = 0; t < k->ntensors; t++) {
    RefTensor *x = &in->inputs[t];
    x->data = ARENA_ARRAY(in->p->arena, float, x->rows * x->cols + 1);
    if (k->tensors[t].ints)
      bf_default_ints(x->data, x->rows * x->cols, seed, t);
    else if (k->tensors[t].io != IO_OUT)
      bf_default_inputs(x->data, x->rows * x->cols, seed, t);
    if (bfrt_dtype_narrow((int)k->tensors[t].type)) /* stored in its type: RNE */
      for (int64_t i = 0; i < x->rows * x->cols; i++) x->data[i] = bfrt_round(x->data[i], (int)k->tensors[t].type);
  }
  device_ints_bind(in->p, in->inputs); /* --input replaces data in place: still bound */
  return 0;
}

RefTensor *instance_copy(Instance *in, const RefTensor *from) {
  int n = in->p->kernel->ntensors;
  RefTensor *to = ARENA_ARRAY(in->p->arena, RefTensor, n + 1);
  for (int t = 0; t < n; t++) {
    size_t count = (size_t)(from[t].rows * from[t].cols);
    to[t] = from[t];
    to[t].data = ARENA_ARRAY(in->p->arena, float, count + 1);
    memcpy(to[t].data, from[t].data, count * sizeof(float));
  }
  return to;
}

int instance_reference(Instance *in, const char **err) {
  if (in->expected) return 0;
  RefTensor *t = instance_copy(in, in->inputs);
  if (reference_run(in->p, in->params, t, err)) return -1;
  in->expected = t;
  return 0;
}

int instance_exact(Instance *in, const char **err) {
  if (in->exact) return 0;
  ExactTensor *exact = ARENA_ARRAY(in->p->arena, ExactTensor, in->p->kernel->ntensors + 1);
  if (reference_f64(in->p, in->params, in->inputs, exact, err)) return -1;
  in->exact = exact;
  return 0;
}

bool instance_compare_f64(const Instance *in, const RefTensor *got, const char *what, ExactErrors *errors,
                          const char **report) {
  const char *worst;
  bool within = reference_f64_compare(in->p, got, in->exact, errors, &worst);
  *report = worst ? arena_printf(in->p->arena, "%s: %s", what, worst) : NULL;
  return within;
}

int instance_execute(Instance *in, const bfrt_kernel *bk, const bfrt_options *opt, RefTensor *results,
                     bfrt_stats *stats, int64_t *wall_ns, const char **err) {
  bfrt *rt = bfrt_new(bk, in->params, err);
  if (!rt) return -1;
  const Kernel *k = in->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (shape[0] != in->inputs[t].rows || shape[1] != in->inputs[t].cols)
      bug("tensor %s: the descriptor's shape differs from the reference's", k->tensors[t].name);
    memcpy(bfrt_tensor_data(rt, t), in->inputs[t].data, (size_t)(shape[0] * shape[1]) * sizeof(float));
  }
  int64_t start = clock_now_ns();
  int status = bfrt_run(rt, opt);
  *wall_ns = clock_now_ns() - start;
  if (status) {
    *err = arena_printf(in->p->arena, "%s", bfrt_error(rt));
  } else {
    *stats = *bfrt_get_stats(rt);
    for (int t = 0; t < k->ntensors; t++)
      memcpy(results[t].data, bfrt_tensor_data(rt, t), (size_t)(results[t].rows * results[t].cols) * sizeof(float));
  }
  bfrt_delete(rt);
  return status ? -1 : 0;
}

static double abs_err(float a, float b) {
  if (isnan(a) != isnan(b)) return INFINITY;
  if (isnan(a)) return 0;
  return fabs((double)a - (double)b);
}

bool instance_compare(const Instance *in, const RefTensor *got, const char *what, FILE *report, double *max_abs_err) {
  const Kernel *k = in->p->kernel;
  bool match = true;
  double worst = 0;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN) continue;
    const RefTensor *want = &in->expected[t];
    int64_t n = want->rows * want->cols, first = -1;
    for (int64_t i = 0; i < n; i++) {
      if (!memcmp(&got[t].data[i], &want->data[i], sizeof(float))) continue;
      if (first < 0) first = i;
      double e = abs_err(got[t].data[i], want->data[i]);
      if (e > worst) worst = e;
      if (!max_abs_err) break; /* the first difference is all the caller wants */
    }
    if (first < 0) continue;
    match = false;
    fprintf(report,
            "%s: tensor %s differs from the reference, first at [%" PRId64 ", %" PRId64 "]: %.9g, expected %.9g\n",
            what, k->tensors[t].name, first / want->cols, first % want->cols, (double)got[t].data[first],
            (double)want->data[first]);
  }
  if (max_abs_err) *max_abs_err = worst;
  return match;
}

/* ---- Timing only (run --exec=sim --timing-only). */

int instance_inputs_timing(Instance *in, uint64_t seed, const char **err) {
  const Kernel *k = in->p->kernel;
  in->inputs = ARENA_ARRAY(in->p->arena, RefTensor, k->ntensors + 1);
  if (reference_shapes(in->p, in->params, in->inputs, err)) return -1;
  uint64_t need = 0, limit = run_byte_limit();
  for (int t = 0; t < k->ntensors; t++) {
    RefTensor *x = &in->inputs[t];
    uint64_t bytes;
    if (!k->tensors[t].ints) continue; /* held by nobody: address space only */
    if (__builtin_mul_overflow((uint64_t)x->rows, (uint64_t)x->cols * 4, &bytes) ||
        __builtin_add_overflow(need, bytes, &need) || need > limit) {
      *err = arena_printf(in->p->arena, "the i32 tensors (the device integers a timing-only run still holds) need more than %" PRIu64
                          " bytes, three quarters of this machine's memory", limit);
      return -1;
    }
    x->data = ARENA_ARRAY(in->p->arena, float, x->rows * x->cols + 1);
    bf_default_ints(x->data, x->rows * x->cols, seed, t); /* the same values a checked run gets */
  }
  device_ints_bind(in->p, in->inputs);
  return 0;
}

int instance_execute_timing(Instance *in, const bfrt_kernel *bk, const bfrt_options *opt, bfrt_stats *stats,
                            int64_t *wall_ns, const char **err) {
  bfrt *rt = bfrt_new_timing(bk, in->params, err);
  if (!rt) return -1;
  const Kernel *k = in->p->kernel;
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].ints)
      memcpy(bfrt_tensor_data(rt, t), in->inputs[t].data, (size_t)(in->inputs[t].rows * in->inputs[t].cols) * sizeof(float));
  int64_t start = clock_now_ns();
  int status = bfrt_run(rt, opt);
  *wall_ns = clock_now_ns() - start;
  if (status) *err = arena_printf(in->p->arena, "%s", bfrt_error(rt));
  else *stats = *bfrt_get_stats(rt);
  bfrt_delete(rt);
  return status ? -1 : 0;
}

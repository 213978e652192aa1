/* exec.c: the one execute-and-compare path (see exec.h). Tensors live in
 * the program's arena, so an instance is freed with its program. */
#include "harness/exec.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/inputs.h"

uint64_t tensor_byte_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_C(1) << 32;
  return (uint64_t)pages * (uint64_t)page / 4;
}

/* The tiles' bytes on the host (4 a cell, sema bounds each tile to
 * MAX_TILE_ELEMS cells), counted 1.5 times beside the tensors' bytes within
 * the limit: a run keeps six cells' worth of each tile element (the
 * reference's and the runtime's, and the f64 reference's 16 bytes) where
 * it keeps four of each tensor element. 0, or -1 with a message. */
static int check_tile_sizes(Instance *in, uint64_t tensor_bytes, uint64_t limit, const char **err) {
  const Kernel *k = in->p->kernel;
  uint64_t bytes = 0, largest = 0;
  int big = 0;
  for (int t = 0; t < k->ntiles; t++) {
    const Tile *x = &k->tiles[t];
    uint64_t b = (uint64_t)(x->slots * x->rows * x->cols) * sizeof(float);
    bytes += b;
    if (b > largest) {
      largest = b;
      big = t;
    }
  }
  if (tensor_bytes + bytes / 2 * 3 <= limit) return 0;
  *err = arena_printf(in->p->arena,
                      "the tiles need %" PRIu64 " bytes (the largest, %s, %" PRIu64 ") beside the tensors' %" PRIu64
                      "; counted 1.5 times (a run keeps six copies of a tile, four of a tensor), that is over the "
                      "limit of %" PRIu64 " bytes, a quarter of this machine's memory",
                      bytes, k->tiles[big].name, largest, tensor_bytes, limit);
  return -1;
}

/* Every tensor's byte size, in checked arithmetic, and their sum within
 * tensor_byte_limit; 0, or -1 with a message naming the sizes. */
static int check_sizes(Instance *in, const char **err) {
  const Kernel *k = in->p->kernel;
  uint64_t total = 0, limit = tensor_byte_limit(), largest = 0;
  int big = 0;
  for (int t = 0; t < k->ntensors; t++) {
    const RefTensor *x = &in->inputs[t];
    uint64_t elems, bytes;
    if (__builtin_mul_overflow((uint64_t)x->rows, (uint64_t)x->cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)sizeof(float), &bytes) || __builtin_add_overflow(total, bytes, &total)) {
      *err = arena_printf(in->p->arena, "tensor %s [%" PRId64 ", %" PRId64 "] is too large: its size in bytes overflows 64 bits",
                          k->tensors[t].name, x->rows, x->cols);
      return -1;
    }
    if (bytes > largest) {
      largest = bytes;
      big = t;
    }
  }
  if (total > limit) {
    *err = arena_printf(in->p->arena,
                        "the tensors need %" PRIu64 " bytes (the largest, %s [%" PRId64 ", %" PRId64 "], %" PRIu64
                        "); the limit is %" PRIu64 " bytes, a quarter of this machine's memory (a run keeps four copies)",
                        total, k->tensors[big].name, in->inputs[big].rows, in->inputs[big].cols, largest, limit);
    return -1;
  }
  return check_tile_sizes(in, total, limit, err);
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

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
  int64_t start = now_ns();
  int status = bfrt_run(rt, opt);
  *wall_ns = now_ns() - start;
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

/* host.c: the host side of the runtime: instances, tensors, runs, errors.
 *
 * bfrt_new evaluates the tensor shapes through the descriptor and allocates
 * every tensor and tile zeroed; the host fills the in tensors, calls
 * bfrt_run, and reads the out tensors. bfrt_new_timing makes an instance
 * for timing only: its i32 tensors are allocated (control reads them),
 * while every float tensor and tile is only reserved address space, never
 * backed and never touched (PROT_NONE: a stray access faults), so that the
 * simulator can tell operands apart by address, as it does with data, at
 * sizes whose data would not fit this machine; ops are not computed. A run picks an executor, resets the
 * tiles, counters and statistics (so runs are repeatable), lets the
 * executor run the engines, then gathers the statistics, writes the trace
 * and frees what the engines allocated. Errors from inside a run are
 * recorded once (the first failure wins, runtime/fail.c) and returned as
 * -1. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "rt.h"
#include "util/clock.h"
#include "util/random.h"

static const bfrt_options default_options;

/* ---- Instances. */

static int64_t *copy_params(const bfrt_kernel *k, const int64_t *params) {
  int64_t *p = calloc((size_t)k->nparams + 1, sizeof *p);
  if (p && k->nparams > 0) memcpy(p, params, (size_t)k->nparams * sizeof *p);
  return p;
}

/* rows * cols floats, zeroed, or NULL when it cannot be allocated. */
static float *zeroed_floats(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0 || (cols > 0 && rows > INT64_MAX / 4 / cols)) return NULL;
  int64_t n = rows * cols;
  return calloc(n > 0 ? (size_t)n : 1, sizeof(float));
}

/* Bytes of rows * cols floats as reserved address space (at least a page). */
static size_t reserved_bytes(int64_t rows, int64_t cols) {
  size_t n = (size_t)(rows * cols) * sizeof(float);
  return n > 0 ? n : 1;
}

/* rows * cols floats of address space that is never backed (timing only),
 * or NULL when it cannot be reserved. */
static float *reserved_floats(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0 || (cols > 0 && rows > INT64_MAX / 4 / cols)) return NULL;
  void *p = mmap(NULL, reserved_bytes(rows, cols), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Whether tensor t of rt holds data (every tensor, unless timing only). */
static int tensor_backed(const bfrt *rt, int t) {
  return !rt->timing_only || rt->k->tensors[t].dtype == BFRT_DTYPE_I32;
}

static float *storage(int backed, int64_t rows, int64_t cols) {
  return backed ? zeroed_floats(rows, cols) : reserved_floats(rows, cols);
}

static void release_storage(float *p, int backed, int64_t rows, int64_t cols) {
  if (!p) return;
  if (backed) free(p);
  else munmap(p, reserved_bytes(rows, cols));
}

static const char *descriptor_error(const bfrt_kernel *k, const int64_t *params) {
  if (!k) return "no kernel";
  if (k->nparams < 0 || (k->nparams > 0 && !params)) return "missing parameters";
  if (k->nengines < 1 || k->nengines > BFRT_MAX_ENGINES) return "engine count out of range";
  if (!k->name || !k->engine_names || !k->engine_kinds || !k->entry) return "incomplete kernel descriptor";
  if (k->ntiles < 0 || k->ntensors < 0 || (k->ntiles && !k->tiles) || (k->ntensors && (!k->tensors || !k->tensor_shape)))
    return "incomplete kernel descriptor";
  for (int e = 0; e < k->nengines; e++)
    if (!k->entry[e] || !k->engine_names[e]) return "an engine has no entry point or name";
  for (int t = 0; t < k->ntiles; t++) {
    const bfrt_tile_desc *d = &k->tiles[t];
    if (d->slots < 1 || d->rows < 1 || d->cols < 1) return "a tile has an empty shape";
    if (d->dtype != BFRT_DTYPE_F32 && !bfrt_dtype_narrow(d->dtype))
      return "a tile has an element type tiles cannot have";
  }
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].dtype < 0 || k->tensors[t].dtype >= BFRT_NDTYPES) return "a tensor has an unknown element type";
  return NULL;
}

/* bfrt_new's messages that name a tensor, one per thread. */
static _Thread_local char tensor_message[256];

static const char *allocate_tensors(bfrt *rt) {
  const bfrt_kernel *k = rt->k;
  rt->tensors = calloc((size_t)k->ntensors + 1, sizeof *rt->tensors);
  if (!rt->tensors) return "out of memory";
  for (int t = 0; t < k->ntensors; t++) {
    int64_t shape[2] = {0, 0};
    if (k->tensor_shape(rt->params, t, shape)) return "division by zero in a tensor shape";
    if (shape[0] < 0 || shape[1] < 0) return "a tensor shape is negative";
    rt->tensors[t] = (Tensor){shape[0], shape[1], storage(tensor_backed(rt, t), shape[0], shape[1])};
    if (!rt->tensors[t].data) {
      uint64_t bytes;
      if (__builtin_mul_overflow((uint64_t)shape[0], (uint64_t)shape[1] * 4, &bytes) || shape[1] > INT64_MAX / 4)
        snprintf(tensor_message, sizeof tensor_message, "tensor %s [%lld, %lld] is too large: its size in bytes overflows 64 bits",
                 k->tensors[t].name, (long long)shape[0], (long long)shape[1]);
      else
        snprintf(tensor_message, sizeof tensor_message, "%s for tensor %s [%lld, %lld] (%llu bytes)",
                 tensor_backed(rt, t) ? "out of memory" : "out of address space to reserve", k->tensors[t].name,
                 (long long)shape[0], (long long)shape[1], (unsigned long long)bytes);
      return tensor_message;
    }
  }
  return NULL;
}

static const char *allocate_tiles(bfrt *rt) {
  const bfrt_kernel *k = rt->k;
  rt->tiles = calloc((size_t)k->ntiles + 1, sizeof *rt->tiles);
  if (!rt->tiles) return "out of memory";
  for (int t = 0; t < k->ntiles; t++) {
    const bfrt_tile_desc *d = &k->tiles[t];
    if (d->rows > INT64_MAX / d->slots) return "out of memory for a tile";
    rt->tiles[t] = storage(!rt->timing_only, d->slots * d->rows, d->cols);
    if (!rt->tiles[t]) return "out of memory for a tile";
  }
  return NULL;
}

static bfrt *new_instance(const bfrt_kernel *kernel, const int64_t *params, int timing_only, const char **err) {
  const char *why = descriptor_error(kernel, params);
  bfrt *rt = why ? NULL : calloc(1, sizeof *rt);
  if (!why && !rt) why = "out of memory";
  if (!why) {
    rt->k = kernel;
    rt->timing_only = timing_only;
    rt->exec = &rt_threads_executor;
    rt->params = copy_params(kernel, params);
    why = !rt->params ? "out of memory" : allocate_tensors(rt);
    if (!why) why = allocate_tiles(rt);
  }
  if (why) {
    bfrt_delete(rt);
    if (err) *err = why;
    return NULL;
  }
  return rt;
}

bfrt *bfrt_new(const bfrt_kernel *kernel, const int64_t *params, const char **err) {
  return new_instance(kernel, params, 0, err);
}

bfrt *bfrt_new_timing(const bfrt_kernel *kernel, const int64_t *params, const char **err) {
  return new_instance(kernel, params, 1, err);
}

void bfrt_delete(bfrt *rt) {
  if (!rt) return;
  for (int t = 0; rt->tensors && t < rt->k->ntensors; t++)
    release_storage(rt->tensors[t].data, tensor_backed(rt, t), rt->tensors[t].rows, rt->tensors[t].cols);
  for (int t = 0; rt->tiles && t < rt->k->ntiles; t++) {
    const bfrt_tile_desc *d = &rt->k->tiles[t];
    release_storage(rt->tiles[t], !rt->timing_only, d->slots * d->rows, d->cols);
  }
  free(rt->tensors);
  free(rt->tiles);
  free(rt->params);
  free(rt);
}

void bfrt_tensor_shape(const bfrt *rt, int t, int64_t shape[2]) {
  if (!shape) return;
  int ok = t >= 0 && t < rt->k->ntensors;
  shape[0] = ok ? rt->tensors[t].rows : 0;
  shape[1] = ok ? rt->tensors[t].cols : 0;
}

float *bfrt_tensor_data(bfrt *rt, int t) {
  return t >= 0 && t < rt->k->ntensors && tensor_backed(rt, t) ? rt->tensors[t].data : NULL;
}

int bfrt_tensor_count(const bfrt *rt) { return rt->k->ntensors; }

const char *bfrt_tensor_name(const bfrt *rt, int t) {
  return t >= 0 && t < rt->k->ntensors ? rt->k->tensors[t].name : NULL;
}

int bfrt_tensor_io(const bfrt *rt, int t) { return t >= 0 && t < rt->k->ntensors ? rt->k->tensors[t].io : -1; }

int bfrt_tensor_ints(const bfrt *rt, int t) { return bfrt_tensor_dtype(rt, t) == BFRT_DTYPE_I32; }

int bfrt_tensor_dtype(const bfrt *rt, int t) { return t >= 0 && t < rt->k->ntensors ? rt->k->tensors[t].dtype : -1; }

int bfrt_tensor_find(const bfrt *rt, const char *name) {
  for (int t = 0; name && t < rt->k->ntensors; t++)
    if (!strcmp(rt->k->tensors[t].name, name)) return t;
  return -1;
}

int bfrt_param_count(const bfrt_kernel *kernel) { return kernel ? kernel->nparams : 0; }

const char *bfrt_param_name(const bfrt_kernel *kernel, int i) {
  return kernel && i >= 0 && i < kernel->nparams ? kernel->param_names[i] : NULL;
}

/* ---- Runs. */

static void reset(bfrt *rt, const bfrt_options *opt) {
  const bfrt_kernel *k = rt->k;
  for (int t = 0; t < k->ntiles && !rt->timing_only; t++) {
    const bfrt_tile_desc *d = &k->tiles[t];
    memset(rt->tiles[t], 0, (size_t)(d->slots * d->rows * d->cols) * sizeof(float));
  }
  for (int t = 0; t < k->ntensors; t++) { /* the host's values, stored in the tensor's type */
    if (!tensor_backed(rt, t)) continue;
    const Tensor *x = &rt->tensors[t];
    sem_round_view((SemView){x->data, x->rows, x->cols, x->cols, k->tensors[t].dtype, 0});
  }
  memset(&rt->stats, 0, sizeof rt->stats);
  rt->error[0] = 0;
  atomic_store(&rt->failed, 0);
  rt->opt = opt;
  rt->exec = opt->exec == BFRT_EXEC_SIM ? &rt_sim_executor : &rt_threads_executor;
  rt->start_ns = clock_now_ns();
  rt_forget_seen(rt);
  for (int e = 0; e < k->nengines; e++) {
    rt->consumers[e] = 0;
    for (int c = 0; c < k->nengines; c++)
      if (c != e && (!k->tracks || (k->tracks[c] >> e & 1))) rt->consumers[e] |= UINT32_C(1) << c;
  }
  for (int e = 0; e < k->nengines; e++) {
    Ctx *cx = &rt->cx[e];
    memset(cx, 0, sizeof *cx);
    cx->rt = rt;
    cx->engine = e;
    cx->op = cx->line = -1;
    cx->tracing = opt->trace_path != NULL;
    /* a distinct stream per engine; opt->jitter_seed says whether to draw */
    cx->jitter = splitmix64(opt->jitter_seed ^ splitmix64((uint64_t)e + 1));
    atomic_init(&cx->state, ENGINE_RUNNING);
  }
}

static void gather(bfrt *rt) {
  bfrt_stats *s = &rt->stats;
  for (int e = 0; e < rt->k->nengines; e++) {
    Ctx *cx = &rt->cx[e];
    s->instructions += cx->completed;
    s->waits += cx->waits;
    s->bookkeeping += cx->bookkeeping;
    s->spills += cx->spills;
    s->held += cx->held;
    if (cx->barriers > s->barriers) s->barriers = cx->barriers;
  }
}

static void release(bfrt *rt) {
  for (int e = 0; e < rt->k->nengines; e++) {
    Ctx *cx = &rt->cx[e];
    while (cx->scratch) {
      Scratch *next = cx->scratch->next;
      free(cx->scratch);
      cx->scratch = next;
    }
    free(cx->trace.ev);
    cx->trace = (TraceBuf){0};
  }
}

/* Races fail the run (after it finished, so all of them are counted). */
static void report_races(bfrt *rt) {
  const char *report;
  rt->stats.races = check_races(rt->checker, &report);
  if (rt->stats.races)
    rt_record_failure(rt, 0, "the race checker found %lld unordered conflicting accesses:%s",
                      (long long)rt->stats.races, report);
  check_free(rt->checker);
  rt->checker = NULL;
}

int bfrt_run(bfrt *rt, const bfrt_options *opt) {
  if (!opt) opt = &default_options;
  reset(rt, opt);
  if (opt->exec != BFRT_EXEC_THREADS && opt->exec != BFRT_EXEC_SIM)
    rt_record_failure(rt, 0, "unknown executor %d", opt->exec);
  else if (rt->timing_only && (opt->exec != BFRT_EXEC_SIM || opt->check))
    rt_record_failure(rt, 0, "a timing-only instance (bfrt_new_timing) holds no data: it runs only on the simulator, without the race checker");
  else if (opt->check && !(rt->checker = check_new(rt)))
    rt_record_failure(rt, 0, "out of memory for the race checker");
  else
    rt->exec->run(rt);
  gather(rt);
  if (rt->checker) report_races(rt);
  if (opt->trace_path && trace_write(rt, opt->trace_path))
    rt_record_failure(rt, 0, "cannot write the trace to %s: %s", opt->trace_path, strerror(errno));
  release(rt);
  return rt_failed(rt) ? -1 : 0;
}

const bfrt_stats *bfrt_get_stats(const bfrt *rt) { return &rt->stats; }

const char *bfrt_error(const bfrt *rt) { return rt->error; }

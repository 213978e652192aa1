/* bfrt.h: the bfsync engine runtime, host side: what a program that runs
 * kernels calls. libtcc-shaped: one opaque handle per kernel instance,
 * state first, errors as return codes with the message from bfrt_error().
 *
 *   extern const bfrt_kernel bfk_softmax_barrier_free;  (from bfsync compile)
 *   bfrt *rt = bfrt_new(&bfk_softmax_barrier_free, params, &err);
 *   fill bfrt_tensor_data(rt, t) for the in tensors; bfrt_run(rt, &opt);
 *   read the out tensors; bfrt_delete(rt);
 *
 * A generated kernel file exports one descriptor, named
 * bfk_<kernel>_<sync mode> (barrier_free or barrier), so any number of
 * kernels, and both modes of one, link into one program. The ABI the
 * generated C itself compiles against is bfrt_kernel.h; the simulator's
 * cost model is bfrt_cost.h. See docs/runtime.md. */
#ifndef BFRT_H
#define BFRT_H

#include <stdint.h>

#define BFRT_MAX_ENGINES 24

typedef struct bfrt bfrt;               /* one kernel instance: parameters, tensors, tiles */
typedef struct bfrt_kernel bfrt_kernel; /* a compiled kernel's descriptor (bfrt_kernel.h) */
typedef struct bfrt_costs bfrt_costs;   /* the simulator's cost model (bfrt_cost.h) */

enum { BFRT_IN, BFRT_OUT, BFRT_INOUT }; /* a tensor's direction */
/* Element types of tensors and tiles (docs/language.md, "Element types").
 * Every element lives in a 4-byte cell: f32 as itself, i32 as an int32_t,
 * and the narrower float types (bf16, fp8e4, fp8e5, fp16) as the f32 of the
 * same value (a bf16 cell's low 16 bits are zero), so every op computes in
 * f32 and rounds to the storage type, to nearest even, when it stores.
 * bfrt_run rounds the host's values in such tensors the same way before
 * the kernel starts. */
enum {
  BFRT_DTYPE_F32,
  BFRT_DTYPE_I32,
  BFRT_DTYPE_BF16,  /* bfloat16 */
  BFRT_DTYPE_FP8E4, /* OCP FP8 E4M3 (float8_e4m3fn): no Inf, overflow is NaN */
  BFRT_DTYPE_FP8E5, /* OCP FP8 E5M2 (float8_e5m2): IEEE-like, overflow is Inf */
  BFRT_DTYPE_FP16,  /* IEEE binary16 */
  BFRT_NDTYPES
};
/* Bytes an element of dtype takes on the device (SBUF, HBM and DMA). */
static inline int bfrt_dtype_bytes(int dtype) {
  return dtype == BFRT_DTYPE_BF16 || dtype == BFRT_DTYPE_FP16 ? 2
         : dtype == BFRT_DTYPE_FP8E4 || dtype == BFRT_DTYPE_FP8E5 ? 1
                                                                 : 4;
}
/* 1 for the float types narrower than f32, which every store rounds to. */
static inline int bfrt_dtype_narrow(int dtype) {
  return dtype == BFRT_DTYPE_BF16 || dtype == BFRT_DTYPE_FP8E4 || dtype == BFRT_DTYPE_FP8E5 || dtype == BFRT_DTYPE_FP16;
}
/* The name a kernel writes dtype with (f32, i32, bf16, fp8e4, fp8e5, fp16;
 * "?" if none): the one spelling of the language, the IR, the trace and the
 * header. */
static inline const char *bfrt_dtype_name(int dtype) {
  static const char *const names[BFRT_NDTYPES] = {"f32", "i32", "bf16", "fp8e4", "fp8e5", "fp16"};
  return dtype >= 0 && dtype < BFRT_NDTYPES ? names[dtype] : "?";
}
enum { BFRT_EXEC_THREADS, BFRT_EXEC_SIM };

typedef struct bfrt_options {
  int exec;                /* BFRT_EXEC_* */
  uint64_t jitter_seed;    /* threads: 0 = no jitter, else random delays */
  const char *trace_path;  /* Chrome trace JSON, or NULL */
  const bfrt_costs *costs; /* sim: required */
  int check;               /* run the happens-before race checker */
  double watchdog_seconds; /* threads: no progress for this long is a deadlock; 0, negative or NaN:
                              the default; INFINITY or 9.2e9 and more (int64 ns): no watchdog */
  int64_t max_instructions; /* an engine running more ops fails the run; 0: no limit */
} bfrt_options;

typedef struct bfrt_stats {
  int64_t instructions, waits, bookkeeping, barriers;
  int64_t held;                    /* ops a producer held by back-pressure (counter window) */
  int64_t spills;                  /* scratch operations on values kept out of registers */
  int64_t races;                   /* check: unordered conflicting pairs */
  int64_t cycles;                  /* sim: makespan */
  int64_t busy[BFRT_MAX_ENGINES];  /* sim: cycles in ops */
  int64_t stall[BFRT_MAX_ENGINES]; /* sim: cycles waiting and in barriers */
} bfrt_stats;

/* New instance of kernel with its parameters (in the kernel's order);
 * NULL if a tensor shape is invalid or too large, or memory runs out
 * (message in *err: static storage, kept until this thread calls bfrt_new
 * again). */
bfrt *bfrt_new(const bfrt_kernel *kernel, const int64_t *params, const char **err);
/* An instance for timing only (the simulator's --timing-only): like
 * bfrt_new, but only its i32 tensors hold data (fill them: control reads
 * them); its float tensors and tiles are address space that is never
 * backed, bfrt_tensor_data returns NULL for them, and no op is computed.
 * bfrt_run runs it only with exec = BFRT_EXEC_SIM and no race checker; the
 * cycles are those a data-holding instance would have. */
bfrt *bfrt_new_timing(const bfrt_kernel *kernel, const int64_t *params, const char **err);
/* Release the instance. */
void bfrt_delete(bfrt *rt);
/* The kernel's tensors, in declaration order: how many, each one's name and
 * direction (BFRT_IN | BFRT_OUT | BFRT_INOUT), and the index of a name (-1,
 * also for a NULL name). rt is an instance from bfrt_new; a tensor index
 * out of range, a NULL name or a NULL shape is answered, never a crash. */
int bfrt_tensor_count(const bfrt *rt);
const char *bfrt_tensor_name(const bfrt *rt, int t);
int bfrt_tensor_io(const bfrt *rt, int t);
/* 1 if tensor t holds i32 device integers (4-byte cells of bfrt_tensor_data), else 0. */
int bfrt_tensor_ints(const bfrt *rt, int t);
/* Tensor t's element type, BFRT_DTYPE_* (-1 if there is no tensor t). */
int bfrt_tensor_dtype(const bfrt *rt, int t);
/* x rounded to nearest even in dtype (BFRT_DTYPE_BF16, _FP8E4, _FP8E5 or
 * _FP16; x itself for f32), the rounding every store to such a tile or
 * tensor makes. */
float bfrt_round(float x, int dtype);
int bfrt_tensor_find(const bfrt *rt, const char *name);
/* Shape of tensor t (rows, cols). */
void bfrt_tensor_shape(const bfrt *rt, int t, int64_t shape[2]);
/* The tensor's row-major storage (rows * cols floats), to fill or read;
 * a tensor of a narrower float type holds floats of its type's values. */
float *bfrt_tensor_data(bfrt *rt, int t);
/* The kernel's parameters: how many, and the name of each, in order. */
int bfrt_param_count(const bfrt_kernel *kernel);
const char *bfrt_param_name(const bfrt_kernel *kernel, int i);
/* Run every engine to completion; 0 on success, -1 on error (bfrt_error). */
int bfrt_run(bfrt *rt, const bfrt_options *opt);
/* Statistics of the last run. */
const bfrt_stats *bfrt_get_stats(const bfrt *rt);
/* The last error, "" if none. */
const char *bfrt_error(const bfrt *rt);

#endif

/* bfsync.h: the C API of libbfsync.so, for programs that embed bfsync
 * (the Python module, python/bfsync/, binds it with ctypes). docs/python.md.
 *
 * A bfs_kernel is a parsed and checked kernel; every operation on it (run,
 * verify, explain) compiles its own copy, so a kernel may be used from
 * several threads at once and its memory does not grow with use. Every
 * function that can fail returns NULL or a non-zero status and sets *err
 * to a bfs_error (free it with bfs_error_free), carrying the diagnostics
 * both as the command line prints them and as gcc's JSON. No function
 * exits or aborts the process on a user error, a run-time error of the
 * kernel or an internal error of bfsync: each comes back as a bfs_error.
 *
 * Tensors cross the API as dense row-major buffers of rows x cols
 * elements, in a numpy dtype string (array.dtype.str):
 *   f32    "<f4"
 *   i32    "<i4"
 *   bf16   "<u2" (bit patterns) or "<f4" (values, rounded to nearest even)
 *   fp16   "<f2" or "<f4" (rounded)
 *   fp8e4, fp8e5  "|u1" (bit patterns) or "<f4" (rounded)
 * Outputs come back in either of the same dtypes ("<f4" is exact: every
 * narrow value is a float32). */
#ifndef BFSYNC_API_H
#define BFSYNC_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bfs_kernel bfs_kernel;
typedef struct bfs_run bfs_run;
typedef struct bfs_error bfs_error;

/* What went wrong (bfs_error_status). */
enum {
  BFS_KERNEL_ERROR = 1,  /* the kernel does not compile: positioned diagnostics */
  BFS_USAGE_ERROR = 2,   /* a bad argument: a parameter, a tensor's shape or dtype, an option */
  BFS_RUNTIME_ERROR = 3, /* the kernel failed while it ran (bounds, NaN, a read before a write) */
  BFS_INTERNAL_ERROR = 4 /* a bug in bfsync, memory exhausted, or the installation (no tcc) */
};

/* The version of bfsync ("0.1.0"). */
const char *bfs_version(void);
/* sizeof(bfs_result) and sizeof(bfs_verify_result): a binding checks its copy of the layout. */
size_t bfs_result_size(void);
size_t bfs_verify_result_size(void);

/* ---- Kernels. target_path: a target file, or NULL for the kernel's
 * `// target:` line or else the built-in trn1. */
bfs_kernel *bfs_compile_file(const char *path, const char *target_path, bfs_error **err);
/* name: the file name diagnostics cite. text need not be NUL-terminated. */
bfs_kernel *bfs_compile_string(const char *text, size_t len, const char *name, const char *target_path,
                               bfs_error **err);
void bfs_kernel_free(bfs_kernel *k);

/* Warnings of a kernel that compiled, as the command line prints them ("" if none). */
const char *bfs_kernel_warnings(const bfs_kernel *k);
const char *bfs_kernel_name(const bfs_kernel *k);
int bfs_kernel_nparams(const bfs_kernel *k);
const char *bfs_kernel_param(const bfs_kernel *k, int i);
int bfs_kernel_ntensors(const bfs_kernel *k);
const char *bfs_tensor_name(const bfs_kernel *k, int t);
/* "in", "out" or "inout". */
const char *bfs_tensor_io(const bfs_kernel *k, int t);
/* "f32", "i32", "bf16", "fp8e4", "fp8e5" or "fp16". */
const char *bfs_tensor_type(const bfs_kernel *k, int t);
/* Parameters are given as nparams NAME, VALUE pairs (names[i], values[i]):
 * an unknown, missing or repeated name is a BFS_USAGE_ERROR positioned at
 * the kernel's parameter list.
 * The shape of every tensor for the parameters, into
 * shapes[2t] (rows) and shapes[2t + 1] (cols). 0, or -1 with *err. */
int bfs_tensor_shapes(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                      int64_t *shapes, bfs_error **err);

/* ---- Running. */
typedef struct bfs_options {
  const char *sync; /* "barrier-free" (NULL: the default) or "barrier" */
  const char *exec; /* "threads" (NULL: the default), "sim", or "timing-only": the
                       simulator's cycles without tensor data (run --exec=sim
                       --timing-only): nothing computed or compared, no outputs */
  uint64_t seed;    /* of the default inputs and of jitter */
  int64_t max_steps; /* of the reference (0: the default, 10^8) */
  int check;        /* race-check the run (vector clocks) */
  int jitter;       /* threads: random delays before instructions */
} bfs_options;

/* One tensor's contents given to a run (NULL data: the seeded default). */
typedef struct bfs_buffer {
  const void *data;
  const char *dtype; /* numpy's dtype.str */
  int64_t rows, cols;
} bfs_buffer;

/* What `bfsync run --json` reports for one sync mode. -1 where a figure
 * does not apply (cycles on threads; ideal cycles the oracle cannot walk;
 * the comparisons, and NaN errors, of a timing-only run). */
typedef struct bfs_result {
  int outputs_match;             /* every out and inout tensor equals the sequential reference */
  int within_f64;                /* every element within its bound of the f64 reference */
  double max_abs_err;            /* against the sequential reference (0 when matched) */
  double max_abs_err_f64, max_rel_err_f64, error_bound_ratio_f64;
  int64_t waits_executed, instructions, bookkeeping, barriers, backpressure_held, spills, races;
  int64_t cycles, ideal_cycles, ideal_sync_cycles;
  int64_t wall_ns;
} bfs_result;

/* Run the kernel with the parameters, inputs one per tensor (ninputs of
 * them, in declaration order; an out tensor's must have NULL data; a
 * wrong dtype or shape is a BFS_USAGE_ERROR positioned at the tensor's
 * declaration). NULL with *err on a bad argument or a run-time error; a
 * mismatch is not an error (see bfs_run_result and bfs_run_report). */
bfs_run *bfs_run_kernel(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                        const bfs_buffer *inputs, int ninputs, const bfs_options *opt, bfs_error **err);
const bfs_result *bfs_run_result(const bfs_run *r);
/* What differed, as the command line says it ("" when everything matched). */
const char *bfs_run_report(const bfs_run *r);
/* Tensor t's shape in this run (0, or -1 when there is no tensor t). */
int bfs_run_shape(const bfs_run *r, int t, int64_t *rows, int64_t *cols);
/* Tensor t after the run (not of a timing-only run: it holds none), into dst (rows x cols of dtype, as for inputs). 0, or -1 with *err. */
int bfs_run_output(const bfs_run *r, int t, void *dst, const char *dtype, bfs_error **err);
void bfs_run_free(bfs_run *r);

/* ---- Verifying and explaining. */
/* What `bfsync verify --json` reports. */
typedef struct bfs_verify_result {
  int failed; /* a race, a deadlock, a mismatch or a late wait no fallback explains */
  int64_t instructions, waits, races, early, late, late_explained, redundant, subsumed, bookkeeping,
      deadlocks, mismatches;
  int schedules;
} bfs_verify_result;

/* The exactness oracle under schedules random interleavings (opt: sync,
 * seed, max_steps). 0, or -1 with *err. */
int bfs_verify(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
               const bfs_options *opt, int schedules, bfs_verify_result *out, bfs_error **err);
/* `bfsync compile --explain`: every inserted wait with its threshold and
 * provenance (malloc'ed; free with bfs_free), or NULL with *err. */
char *bfs_explain(const bfs_kernel *k, const char *sync, bfs_error **err);
void bfs_free(void *p);

/* ---- Errors. */
int bfs_error_status(const bfs_error *e);
/* The diagnostics as `bfsync` prints them: file:line:col: error: ..., the line, a caret. */
const char *bfs_error_text(const bfs_error *e);
/* The same as gcc's JSON diagnostics (docs/diagnostics.md). */
const char *bfs_error_json(const bfs_error *e);
void bfs_error_free(bfs_error *e);

#ifdef __cplusplus
}
#endif

#endif

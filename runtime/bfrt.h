/* bfrt.h: the bfsync engine runtime, the one interface generated kernels use.
 *
 * A generated kernel is a bfrt_kernel descriptor plus one C function per
 * engine. Each engine function runs its instruction stream in order and
 * touches the machine only through the calls below: ops (each counts one
 * completion on its engine's counter), waits on another engine's counter,
 * barriers (baseline only) and a charge for bookkeeping arithmetic. A
 * hardware team ports bfsync by implementing these calls on their device;
 * bfsync ships two implementations: real threads and a cycle simulator.
 *
 * Host side (libtcc style): state first, errors as return codes, the
 * message from bfrt_error(). Kernel side: calls never return an error;
 * a failing call (bounds, division by zero, deadlock) stops the whole
 * kernel and bfrt_run() returns -1. See docs/runtime.md. */
#ifndef BFRT_H
#define BFRT_H

#include <stdint.h>

#define BFRT_MAX_ENGINES 8

/* ---- Ops: the table in ops.def, installed beside this header. */
enum {
#define OP(id, name, sig, engines, shape, cls) BFRT_##id,
#include "ops.def"
#undef OP
  BFRT_NOPS
};

/* Op classes, each with its own throughput in the cost model. */
enum { BFRT_CLASS_DMA, BFRT_CLASS_MATMUL, BFRT_CLASS_ELEMWISE, BFRT_CLASS_TRANSCENDENTAL,
       BFRT_CLASS_REDUCE, BFRT_NCLASSES };

/* ---- The kernel descriptor, emitted by the backend. */
enum { BFRT_IN, BFRT_OUT, BFRT_INOUT };

typedef struct bfrt_ctx bfrt_ctx; /* one engine's view of a running kernel */

typedef struct bfrt_tile_desc {
  const char *name;
  int64_t slots, rows, cols; /* unslotted tiles have 1 slot */
} bfrt_tile_desc;

typedef struct bfrt_tensor_desc {
  const char *name;
  int io; /* BFRT_IN | BFRT_OUT | BFRT_INOUT */
  int ints; /* 1: i32 elements (device integers, read with bfrt_elem), stored in the float cells */
} bfrt_tensor_desc;

typedef struct bfrt_kernel {
  const char *name;
  int nparams;
  const char *const *param_names;
  int nengines;
  const char *const *engine_names;
  const int *engine_kinds;                   /* BFRT_KIND_* of each engine */
  void (*const *entry)(bfrt_ctx *, const int64_t *params); /* one per engine */
  int ntiles;
  const bfrt_tile_desc *tiles;
  int ntensors;
  const bfrt_tensor_desc *tensors;
  /* Shape of tensor t for these parameters; returns 0, or the source line of a
   * division by zero in the shape expression. */
  int (*tensor_shape)(const int64_t *params, int t, int64_t shape[2]);
} bfrt_kernel;

enum { BFRT_KIND_PE, BFRT_KIND_ACT, BFRT_KIND_DVE, BFRT_KIND_POOL, BFRT_KIND_DMA, BFRT_NKINDS };

/* ---- Kernel side: what generated engine functions call. */
enum { BFRT_ARG_TILE, BFRT_ARG_HBM, BFRT_ARG_IMM };

typedef struct bfrt_arg {
  int kind;     /* BFRT_ARG_* */
  int id;       /* tile or tensor index in the descriptor */
  int64_t a, b; /* tile: a = slot; hbm: (a, b) = tile coordinates */
  float imm;
} bfrt_arg;

#define BFRT_TILE(id, slot) {BFRT_ARG_TILE, (id), (slot), 0, 0.0f}
#define BFRT_HBM(id, r, c) {BFRT_ARG_HBM, (id), (r), (c), 0.0f}
#define BFRT_IMM(x) {BFRT_ARG_IMM, 0, 0, 0, (x)}

/* Run op on this engine's operands; counts one completion when it is done. */
void bfrt_op(bfrt_ctx *cx, int op, int line, int nargs, const bfrt_arg *args);
/* Stall this engine until engine's counter reaches threshold. */
void bfrt_wait(bfrt_ctx *cx, int engine, int64_t threshold, int line);
/* Full barrier of all engines; every counter reads 0 after it (baseline). */
void bfrt_barrier(bfrt_ctx *cx, int line);
/* Charge n bookkeeping operations (sync arithmetic) to this engine. */
void bfrt_bookkeep(bfrt_ctx *cx, int64_t n);
/* Floor division and modulo; a zero divisor stops the kernel naming line. */
int64_t bfrt_div(bfrt_ctx *cx, int64_t a, int64_t b, int line);
int64_t bfrt_mod(bfrt_ctx *cx, int64_t a, int64_t b, int line);
/* Element (row, col) of i32 tensor `tensor` (a device integer, read by this
 * engine: costs device_read cycles in the simulator); out of bounds stops
 * the kernel naming line, the tensor and the element. */
int64_t bfrt_elem(bfrt_ctx *cx, int tensor, int64_t row, int64_t col, int line);
/* A zeroed array of n counters owned by this engine until the run ends. */
int64_t *bfrt_scratch(bfrt_ctx *cx, int64_t n);

/* ---- Cost model for the simulator (filled from a target file). */
typedef struct bfrt_engine_cost {
  int64_t overhead;                      /* cycles to issue any instruction */
  double elems_per_cycle[BFRT_NCLASSES]; /* throughput per op class (per lane when lanes > 0) */
  int64_t lanes;           /* partitions (tile rows) processed in parallel; 0: none */
  double two_input_factor; /* body cost of an op reading two full tiles (add, ...); 0: 1 */
  int64_t pe_rows, pe_cols;              /* systolic array shape (matmul) */
  int64_t matmul_min_cols; /* a matmul pass streams at least this many columns; 0: none */
  int64_t dma_latency;                   /* cycles before the first byte */
  double dma_bytes_per_cycle;
  int64_t dma_outstanding; /* dma engines: transfers in flight at once; 0 or 1: one at a time */
  int64_t sem_latency;   /* counter increment to visibility on other engines */
  int64_t wait_cost;     /* cycles of an executed wait */
  int64_t bookkeep_cost; /* cycles per bookkeeping operation */
  int64_t barrier_cost;  /* cycles from the last arrival to release */
  int64_t device_read_cost; /* cycles of a device-integer read (bfrt_elem) */
} bfrt_engine_cost;

typedef struct bfrt_costs {
  double clock_ghz; /* the clock every cycle count above is in (trace times) */
  bfrt_engine_cost kind[BFRT_NKINDS]; /* per engine kind */
} bfrt_costs;

/* Cycles op takes on an engine of kind for these operand shapes (rows, cols
 * of the destination and of the first source). Shared with the oracle's ideal. */
int64_t bfrt_op_cycles(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                       const int64_t src[2]);

/* The two sides of an op's cost, from its start: occupancy, the cycles its
 * engine is busy before it can issue its next instruction, and completion,
 * when its result is ready and its counter increment is stamped
 * (= bfrt_op_cycles). Equal except on a dma engine with dma_outstanding > 1,
 * whose queue is busy only for overhead + bytes / dma_bytes_per_cycle while
 * the transfer's latency overlaps the next ones (docs/targets.md). */
typedef struct bfrt_op_time {
  int64_t occupancy, completion;
} bfrt_op_time;
bfrt_op_time bfrt_op_timing(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                            const int64_t src[2]);
/* How many of its ops an engine of kind may have in flight: op k starts no
 * earlier than the stamp of op k - window (1: each op completes before the
 * next starts). */
int64_t bfrt_op_window(const bfrt_costs *costs, int kind);

/* ---- Host side. */
typedef struct bfrt bfrt; /* one kernel instance: parameters, tensors, tiles */

enum { BFRT_EXEC_THREADS, BFRT_EXEC_SIM };

typedef struct bfrt_options {
  int exec;                 /* BFRT_EXEC_* */
  uint64_t jitter_seed;     /* threads: 0 = no jitter, else random delays */
  const char *trace_path;   /* Chrome trace JSON, or NULL */
  const bfrt_costs *costs;  /* sim: required */
  int check;                /* run the happens-before race checker */
  double watchdog_seconds;  /* threads: no progress for this long is a deadlock */
} bfrt_options;

typedef struct bfrt_stats {
  int64_t instructions, waits, bookkeeping, barriers;
  int64_t races;                      /* --check: unordered conflicting pairs */
  int64_t cycles;                     /* sim: makespan */
  int64_t busy[BFRT_MAX_ENGINES];     /* sim: cycles in ops */
  int64_t stall[BFRT_MAX_ENGINES];    /* sim: cycles waiting and in barriers */
} bfrt_stats;

/* New instance of kernel with its parameters; NULL if out of memory or a
 * tensor shape is invalid (message in *err, static storage). */
bfrt *bfrt_new(const bfrt_kernel *kernel, const int64_t *params, const char **err);
/* Release the instance. */
void bfrt_delete(bfrt *rt);
/* Shape of tensor t (rows, cols). */
void bfrt_tensor_shape(const bfrt *rt, int t, int64_t shape[2]);
/* The tensor's row-major storage (rows * cols floats), to fill or read. */
float *bfrt_tensor_data(bfrt *rt, int t);
/* Run every engine to completion; 0 on success, -1 on error (bfrt_error). */
int bfrt_run(bfrt *rt, const bfrt_options *opt);
/* Statistics of the last run. */
const bfrt_stats *bfrt_get_stats(const bfrt *rt);
/* The last error, "" if none. */
const char *bfrt_error(const bfrt *rt);

#endif

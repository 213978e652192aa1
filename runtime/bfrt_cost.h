/* bfrt_cost.h: the cycle simulator's cost model. A host that runs kernels
 * on the simulator (bfrt_options.exec = BFRT_EXEC_SIM) fills a bfrt_costs,
 * usually from a target file (docs/targets.md) with bfrt_costs_load, and
 * passes it in bfrt_options.costs; the oracle's ideal makespan uses the
 * same model.
 * Every value is in cycles of the target's clock. */
#ifndef BFRT_COST_H
#define BFRT_COST_H

#include <stddef.h>
#include <stdint.h>

#include "bfrt_kernel.h"

/* DMA engines one transfer may stream on at most (dma_split). */
#define BFRT_MAX_DMA_SPLIT 64

/* Op classes, each with its own throughput in the cost model. */
enum { BFRT_CLASS_DMA, BFRT_CLASS_MATMUL, BFRT_CLASS_ELEMWISE, BFRT_CLASS_TRANSCENDENTAL,
       BFRT_CLASS_REDUCE, BFRT_NCLASSES };

typedef struct bfrt_engine_cost {
  int64_t overhead;                      /* cycles to issue any instruction */
  double elems_per_cycle[BFRT_NCLASSES]; /* throughput per op class (per lane when lanes > 0) */
  int64_t lanes;           /* partitions (tile rows) processed in parallel; 0: none */
  double two_input_factor; /* body cost of an op reading two full tiles (add, ...); 0: 1 */
  int64_t pe_rows, pe_cols;              /* systolic array shape (matmul) */
  int64_t matmul_min_cols; /* a matmul pass streams at least this many columns; 0: none */
  double matmul_narrow_factor; /* nc_matmul: inputs of 2 bytes or fewer stream this much faster; 0: 1 */
  int64_t dma_latency;                   /* cycles before the first byte */
  double dma_bytes_per_cycle;            /* of one DMA engine */
  int64_t dma_outstanding; /* dma engines: transfers in flight at once; 0 or 1: one at a time */
  int64_t dma_split;       /* a transfer of P rows streams on min(P, dma_split) DMA engines; 0: 1 */
  int64_t dma_row_bytes;   /* bytes of bandwidth each partition row of a transfer costs beyond its own
                              (its descriptor and packet set-up); 0: none */
  int64_t sem_latency;   /* counter increment to visibility on other engines */
  int64_t wait_cost;     /* cycles of an executed wait */
  int64_t bookkeep_cost; /* cycles per bookkeeping operation */
  int64_t barrier_cost;  /* cycles from the last arrival to release */
  int64_t device_read_cost; /* cycles of a device-integer read (bfrt_elem) */
} bfrt_engine_cost;

struct bfrt_costs {
  double clock_ghz; /* the clock every cycle count above is in (trace times) */
  bfrt_engine_cost kind[BFRT_NKINDS]; /* per engine kind */
};

/* Read the target file at path (docs/targets.md) into *out: 0, or -1 with
 * every diagnostic (file:line:col: error: ..., with its source line and
 * caret) in err, errsize bytes, NUL-terminated, truncated if longer; *out
 * is untouched on error. The compiler's own reader (bfsync --target). */
int bfrt_costs_load(bfrt_costs *out, const char *path, char *err, size_t errsize);

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
  int64_t dma_engines; /* a transfer on a target with dma_split: the DMA engines it streams on; else 0 */
  int64_t stream;      /* and the cycles it holds them */
} bfrt_op_time;
bfrt_op_time bfrt_op_timing(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                            const int64_t src[2]);
/* bfrt_op_timing for elements of elem_bytes bytes (bfrt_dtype_bytes of the
 * wider end of a transfer; bfrt_op_timing assumes 4): only a transfer's
 * cost depends on it. */
bfrt_op_time bfrt_op_timing_sized(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                                  const int64_t src[2], int elem_bytes);
/* bfrt_op_timing_sized for a transfer whose partition rows each fall into
 * runs contiguous pieces in hbm (1 for a tile or an element slice without
 * a column step; its columns for a slice with one): each piece pays
 * dma_row_bytes. */
bfrt_op_time bfrt_op_timing_shaped(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                                   const int64_t src[2], int elem_bytes, int64_t runs);
/* How many of its ops an engine of kind may have in flight: op k starts no
 * earlier than the stamp of op k - window (1: each op completes before the
 * next starts). */
int64_t bfrt_op_window(const bfrt_costs *costs, int kind);

#endif

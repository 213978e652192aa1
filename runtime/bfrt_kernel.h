/* bfrt_kernel.h: the ABI generated kernels compile against.
 *
 * A generated kernel is a bfrt_kernel descriptor plus one C function per
 * engine. Each engine function runs its instruction stream in order and
 * touches the machine only through the calls below: ops (each counts one
 * completion on its engine's counter), waits on another engine's counter,
 * barriers (baseline only) and a charge for bookkeeping arithmetic. A
 * hardware team ports bfsync by implementing these calls on their device;
 * bfsync ships two implementations: real threads and a cycle simulator.
 *
 * Kernel-side calls never return an error: a failing call (bounds,
 * division by zero, deadlock) stops the whole kernel and bfrt_run()
 * returns -1. Host programs need only bfrt.h. See docs/runtime.md. */
#ifndef BFRT_KERNEL_H
#define BFRT_KERNEL_H

#include <stdint.h>

#include "bfrt.h"

/* ---- Ops: the table in ops.def, installed beside this header. */
enum {
#define OP(id, name, sig, engines, shape, cls, acc) BFRT_##id,
#include "ops.def"
#undef OP
  BFRT_NOPS
};

/* ---- The kernel descriptor, emitted by the backend. */
typedef struct bfrt_ctx bfrt_ctx; /* one engine's view of a running kernel */

enum { BFRT_KIND_PE, BFRT_KIND_ACT, BFRT_KIND_DVE, BFRT_KIND_POOL, BFRT_KIND_DMA, BFRT_NKINDS };

typedef struct bfrt_tile_desc {
  const char *name;
  int64_t slots, rows, cols; /* unslotted tiles have 1 slot */
  int dtype;                 /* BFRT_DTYPE_*: f32 or a narrower float type, not i32 */
} bfrt_tile_desc;

typedef struct bfrt_tensor_desc {
  const char *name;
  int io;    /* BFRT_IN | BFRT_OUT | BFRT_INOUT */
  int dtype; /* BFRT_DTYPE_*; i32: device integers, read with bfrt_elem */
} bfrt_tensor_desc;

struct bfrt_kernel {
  const char *name;
  int nparams;
  const char *const *param_names;
  int nengines;
  const char *const *engine_names;
  const int *engine_kinds;                                 /* BFRT_KIND_* of each engine */
  void (*const *entry)(bfrt_ctx *, const int64_t *params); /* one per engine */
  int ntiles;
  const bfrt_tile_desc *tiles;
  int ntensors;
  const bfrt_tensor_desc *tensors;
  /* Shape of tensor t for these parameters; returns 0, or the source line of a
   * division by zero in the shape expression. */
  int (*tensor_shape)(const int64_t *params, int t, int64_t shape[2]);
  /* The target's counter width: counters wrap modulo 2^counter_bits; 0 = 64.
   * An engine reads a counter's low bits and extends them from what it last
   * saw of that counter (bfrt_counter_extend), exact while the counter is
   * less than 2^counter_bits past it; the producer's back-pressure keeps it
   * so (docs/algorithm.md, section 7). */
  int counter_bits;
  /* tracks[c]: bit e set when engine c waits on engine e's counter, so that
   * e holds each op until c has seen its counter recently enough; NULL:
   * every engine tracks every other. */
  const uint32_t *tracks;
};

/* The count a counter that reads raw (its low bits bits) holds, given that
 * it is at least seen and less than 2^bits past it: seen plus the
 * difference raw - seen taken modulo 2^bits. With 64 bits, raw itself. */
static inline int64_t bfrt_counter_extend(int64_t seen, int64_t raw, int bits) {
  if (bits <= 0 || bits >= 64) return raw;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  return (int64_t)((uint64_t)seen + (((uint64_t)raw - (uint64_t)seen) & mask));
}

/* ---- Kernel side: what generated engine functions call. */
enum { BFRT_ARG_TILE, BFRT_ARG_HBM, BFRT_ARG_IMM };

typedef struct bfrt_arg {
  int kind;     /* BFRT_ARG_* */
  int id;       /* tile or tensor index in the descriptor */
  int64_t a, b; /* tile: a = slot; hbm: (a, b) = tile coordinates, or an element slice's first row and column */
  float imm;
  /* view 0: a whole tile slot, or the hbm tile (a, b) in units of the
   * other operand's shape. view 1: a tile view of the slot, partitions
   * r0 .. r0 + rn - 1 and columns c0 .. c0 + cn - 1, or the hbm element
   * slice of rows a .. a + rn - 1 and columns b .. b + cn - 1. An extent
   * may be 0 (a ragged view clipped to nothing): the op touches nothing. */
  int view;
  int64_t r0, rn, c0, cn;
  /* view 2: rows by index (a gather or scatter): rows IDX[gr + p, gc] (gaxis
   * 0) or IDX[gr, gc + p] (gaxis 1) of i32 tensor gi for p < rn, columns
   * b .. b + cn - 1 of tensor id */
  int gi, gaxis;
  int64_t gr, gc;
} bfrt_arg;

#define BFRT_TILE(id, slot) {BFRT_ARG_TILE, (id), (slot), 0, 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define BFRT_VIEW(id, slot, r0, rn, c0, cn) {BFRT_ARG_TILE, (id), (slot), 0, 0.0f, 1, (r0), (rn), (c0), (cn), 0, 0, 0, 0}
#define BFRT_HBM(id, r, c) {BFRT_ARG_HBM, (id), (r), (c), 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define BFRT_SLICE(id, r, rn, c, cn) {BFRT_ARG_HBM, (id), (r), (c), 0.0f, 1, 0, (rn), 0, (cn), 0, 0, 0, 0}
#define BFRT_GATHER(id, rn, c, cn, gi, gr, gc, gaxis) \
  {BFRT_ARG_HBM, (id), 0, (c), 0.0f, 2, 0, (rn), 0, (cn), (gi), (gaxis), (gr), (gc)}
#define BFRT_IMM(x) {BFRT_ARG_IMM, 0, 0, 0, (x), 0, 0, 0, 0, 0, 0, 0, 0, 0}

/* Run op on this engine's operands; counts one completion when it is done. */
void bfrt_op(bfrt_ctx *cx, int op, int line, int nargs, const bfrt_arg *args);
/* Stall this engine until engine's counter reaches threshold. */
void bfrt_wait(bfrt_ctx *cx, int engine, int64_t threshold, int line);
/* Full barrier of all engines; every counter reads 0 after it (baseline). */
void bfrt_barrier(bfrt_ctx *cx, int line);
/* Charge n bookkeeping operations (sync arithmetic) to this engine. */
void bfrt_bookkeep(bfrt_ctx *cx, int64_t n);
/* Charge n scratch operations: loads and stores of values the compiler
 * keeps in on-chip scratch instead of a register (docs/algorithm.md,
 * section 7.4); the simulator costs each as a bookkeeping operation. */
void bfrt_spill(bfrt_ctx *cx, int64_t n);
/* Floor division and modulo; a zero divisor stops the kernel naming line. */
int64_t bfrt_div(bfrt_ctx *cx, int64_t a, int64_t b, int line);
int64_t bfrt_mod(bfrt_ctx *cx, int64_t a, int64_t b, int line);
/* Element (row, col) of i32 tensor `tensor` (a device integer, read by this
 * engine: costs device_read cycles in the simulator); out of bounds stops
 * the kernel naming line, the tensor and the element. */
int64_t bfrt_elem(bfrt_ctx *cx, int tensor, int64_t row, int64_t col, int line);
/* Returns slot, the slot of tile that op at line uses, once it is in
 * range; else stops the kernel with the op's own slot error. Bookkeeping
 * indexes its arrays with it, so it never touches memory out of range. */
int64_t bfrt_slot(bfrt_ctx *cx, int op, int tile, int64_t slot, int line);
/* Returns at, the first partition (dim 0) or column (dim 1) of a view of
 * extent n of tile that op at line uses, once the view lies inside the
 * tile; else stops the kernel with the op's own view error. */
int64_t bfrt_view_at(bfrt_ctx *cx, int op, int tile, int dim, int64_t at, int64_t n, int line);
/* Returns row once hbm tile (row, col) of tensor, in units of tile's shape,
 * lies inside the tensor, as op at line needs it; else stops the kernel with
 * the op's own out-of-bounds error. Bookkeeping that tracks hbm per tile
 * indexes its arrays with the checked coordinates (never out of range). */
/* Returns at, the first row (dim 0) or column (dim 1) of an element slice
 * of extent n of tensor that op at line moves, once the slice lies inside
 * the tensor; else stops the kernel with the op's own error. */
int64_t bfrt_hbm_at(bfrt_ctx *cx, int op, int tensor, int dim, int64_t at, int64_t n, int line);
int64_t bfrt_hbm_row(bfrt_ctx *cx, int op, int tensor, int tile, int64_t row, int64_t col, int line);
/* The tracking entries of a run of single rows of tensor's grid (ncols
 * cells a row): rows by index, element (a, b) + p along axis of i32
 * tensor gi for p < n, each checked inside tensor with op's error; or
 * (gi -1) rows a .. a + b - 1 (b <= n), checked likewise; each row's kc
 * cells from column cell c0. bfrt_rows_max loads the largest, 0 for
 * none; bfrt_rows_store stores value into each. */
int64_t bfrt_rows_max(bfrt_ctx *cx, const int64_t *arr, int tensor, int gi, int axis, int64_t a, int64_t b, int64_t n,
                      int64_t c0, int64_t kc, int64_t ncols, int op, int line);
void bfrt_rows_store(bfrt_ctx *cx, int64_t *arr, int64_t value, int tensor, int gi, int axis, int64_t a, int64_t b,
                     int64_t n, int64_t c0, int64_t kc, int64_t ncols, int op, int line);
/* Enter `for v in lo .. hi`: returns hi; a loop of 2^63 or more iterations
 * (more than a 64-bit counter can count) stops the kernel naming line. */
int64_t bfrt_loop(bfrt_ctx *cx, int64_t lo, int64_t hi, int line);
/* A zeroed array of n counters owned by this engine until the run ends. */
int64_t *bfrt_scratch(bfrt_ctx *cx, int64_t n);

#endif

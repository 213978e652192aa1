/* cost.c: how many cycles an op takes on an engine, from the target's cost
 * model. The simulator charges it, and the oracle's ideal makespan uses
 * the same function, so the two are comparable.
 *
 * The rules follow the public NeuronCore-v2 guidance (docs/targets.md
 * cites it), with every constant taken from the target:
 *   every op          overhead (the static cost of issuing an instruction
 *                     and starting its SBUF/PSUM accesses) + its body;
 *   on a dma engine   dma_latency + bytes / (engines * dma_bytes_per_cycle),
 *                     each partition row a contiguous run that costs
 *                     dma_row_bytes more (its descriptor: a transfer of
 *                     few bytes per partition, a narrow view or element
 *                     slice, is less efficient per byte), and a slice
 *                     with a column step one run per element;
 *                     with each element as wide as the wider end's type
 *                     (4 bytes for f32, 2 for bf16 and fp16, 1 for fp8e4 and fp8e5: a bf16 to
 *                     bf16 transfer moves half the bytes of an f32 one; one
 *                     that converts is charged at its wider end, an
 *                     assumption: the engine reads or writes that many);
 *                     where a transfer of P rows (partitions) is split
 *                     over engines = min(P, dma_split) DMA engines, as the
 *                     hardware parallelizes one transfer over up to 16
 *                     (docs/targets.md);
 *   matmul            acc[M,N] = a[M,K]·b[K,N]: the systolic array holds a
 *                     pe_rows x pe_cols block of the stationary operand
 *                     (K x M), so there are ceil(K/pe_rows) * ceil(M/pe_cols)
 *                     passes, each streaming the N columns of the moving
 *                     operand, and no pass is shorter than matmul_min_cols
 *                     (the array's fill latency): per pass
 *                     max(N, matmul_min_cols) / elems_per_cycle[matmul];
 *   transpose         a matmul by the identity: [C,R] = [C,R]·[R,R];
 *   nc_matmul         d[M,N] = st[K,M]^T · mv[K,N], as TensorE runs it: the
 *                     stationary is loaded into the array first, its M
 *                     columns at the moving rate (an assumption: the load's
 *                     own rate is not published), then the N moving columns
 *                     stream through, no fewer than matmul_min_cols (the
 *                     minimum issue interval), each load and stream once per
 *                     pe_rows x pe_cols block of the stationary; the rate is
 *                     elems_per_cycle[matmul] for fp32 inputs and
 *                     matmul_narrow_factor times that for inputs of 2 bytes
 *                     or fewer (bf16, fp16, fp8: "fp32 4x slower");
 *   nc_transpose      on the pe as transpose; on another engine (VectorE,
 *                     32 x 32 at most) like every other op below;
 *   everything else   the partition axis (rows) runs on `lanes` lanes in
 *                     parallel, so a [P,N] tile takes ceil(P/lanes) passes
 *                     of N elements per lane (lanes = 0: one pass over all
 *                     P*N elements), at the class's elements per cycle;
 *                     ops that stream two full tiles (add, sub, mul, max)
 *                     cost two_input_factor times as much ("~2N").
 * The larger of the destination and the first source sets the shape (a
 * row reduction reads [P,N] and writes [P,1]). A throughput of zero or
 * less counts as one per cycle, so a partial target cannot divide by zero.
 *
 * An op's cost has two sides (bfrt_op_timing): how long its engine is
 * occupied and when its result is ready. They differ only on a dma engine
 * whose target sets dma_outstanding > 1: a real DMA queue hands its
 * descriptors to DMA engines that work asynchronously, so the queue is
 * held for overhead + bytes / bandwidth (the bytes of one queue still
 * stream one transfer after another) while each transfer's latency
 * overlaps the next ones, up to dma_outstanding transfers in flight. A
 * lone transfer costs the same either way. */
#include <math.h>

#include "rt.h"

static double rate(double r) { return r > 0 ? r : 1.0; }

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

/* Cycles for work at per_cycle, capped at BFRT_CYCLES_MAX so that no tile,
 * however large, and no target value make a cost that overflows. */
static int64_t cycles_for(double work, double per_cycle) {
  double cycles = ceil(work / rate(per_cycle));
  return cycles < (double)BFRT_CYCLES_MAX ? (int64_t)cycles : BFRT_CYCLES_MAX;
}

static int64_t add_cycles(int64_t a, int64_t b) { return a < BFRT_CYCLES_MAX - b ? a + b : BFRT_CYCLES_MAX; }

static int64_t mul_cycles(int64_t a, int64_t b) {
  return b == 0 || a < BFRT_CYCLES_MAX / b ? a * b : BFRT_CYCLES_MAX;
}

static int64_t matmul_cycles(const bfrt_engine_cost *c, int64_t m, int64_t k, int64_t n) {
  int64_t passes = mul_cycles(ceil_div(k, c->pe_rows), ceil_div(m, c->pe_cols));
  int64_t cols = n > c->matmul_min_cols ? n : c->matmul_min_cols;
  return mul_cycles(passes, cycles_for((double)cols, c->elems_per_cycle[BFRT_CLASS_MATMUL]));
}

/* The DMA engines a transfer of rows partitions streams on. */
static double split_engines(const bfrt_engine_cost *c, int64_t rows) {
  int64_t most = c->dma_split > 1 ? c->dma_split : 1;
  return (double)(rows < most ? (rows > 1 ? rows : 1) : most);
}

/* nc_matmul: per block of the stationary, its load and the moving stream. */
static int64_t nc_matmul_cycles(const bfrt_engine_cost *c, int64_t k, int64_t m, int64_t n, int elem_bytes) {
  int64_t blocks = mul_cycles(ceil_div(k, c->pe_rows), ceil_div(m, c->pe_cols));
  double per_cycle = rate(c->elems_per_cycle[BFRT_CLASS_MATMUL]);
  if (elem_bytes <= 2 && c->matmul_narrow_factor > 0) per_cycle *= c->matmul_narrow_factor;
  int64_t rows_loaded = m < c->pe_cols || c->pe_cols <= 0 ? m : c->pe_cols;
  int64_t cols = n > c->matmul_min_cols ? n : c->matmul_min_cols;
  return mul_cycles(blocks, add_cycles(cycles_for((double)rows_loaded, per_cycle), cycles_for((double)cols, per_cycle)));
}

/* Ops that stream two full tiles: tensor_tensor's add, sub, mul, max, and
 * tensor_tensor_scan's data0 and data1 ("~2N for two-input instructions"). */
static int reads_two_tiles(int op) {
  return (rt_ops[op].sig == SIG_T_TT && rt_ops[op].shape == SHAPE_SAME) || rt_ops[op].shape == SHAPE_SCAN;
}

static int64_t lane_cycles(const bfrt_engine_cost *c, int op, const int64_t shape[2]) {
  int64_t passes = c->lanes > 0 ? ceil_div(shape[0], c->lanes) : 1;
  double per_lane = c->lanes > 0 ? (double)shape[1] : (double)shape[0] * (double)shape[1];
  if (reads_two_tiles(op) && c->two_input_factor > 0) per_lane *= c->two_input_factor;
  return mul_cycles(passes, cycles_for(per_lane, c->elems_per_cycle[rt_ops[op].cls]));
}

static int valid(const bfrt_costs *costs, int kind, int op) {
  return costs && kind >= 0 && kind < BFRT_NKINDS && op >= 0 && op < BFRT_NOPS;
}

static int pipelined(const bfrt_costs *costs, int kind) {
  return kind == BFRT_KIND_DMA && costs->kind[kind].dma_outstanding > 1;
}

bfrt_op_time bfrt_op_timing_sized(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                                  const int64_t src[2], int elem_bytes) {
  return bfrt_op_timing_shaped(costs, kind, op, dst, src, elem_bytes, 1);
}

bfrt_op_time bfrt_op_timing_shaped(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                                   const int64_t src[2], int elem_bytes, int64_t runs) {
  if (!valid(costs, kind, op)) return (bfrt_op_time){0, 0, 0, 0};
  const bfrt_engine_cost *c = &costs->kind[kind];
  const int64_t *shape = dst[0] * dst[1] >= src[0] * src[1] ? dst : src;
  int64_t body;
  if (kind == BFRT_KIND_DMA || rt_ops[op].cls == BFRT_CLASS_DMA) {
    /* each partition row is `runs` contiguous pieces (one, or each element of a slice
     * with a column step), and each pays dma_row_bytes beside its own bytes */
    double row = (double)shape[1] * (double)(elem_bytes > 0 ? elem_bytes : 4) +
                 (double)(runs > 1 ? runs : 1) * (double)c->dma_row_bytes;
    int64_t stream = cycles_for((double)shape[0] * row, split_engines(c, shape[0]) * rate(c->dma_bytes_per_cycle));
    int64_t occupancy = add_cycles(c->overhead, stream);
    int64_t completion = add_cycles(occupancy, c->dma_latency);
    int64_t engines = c->dma_split > 0 ? (int64_t)split_engines(c, shape[0]) : 0;
    return (bfrt_op_time){pipelined(costs, kind) ? occupancy : completion, completion, engines, stream};
  }
  if (op == BFRT_MATMUL || op == BFRT_MATMUL_ACC) body = matmul_cycles(c, dst[0], src[1], dst[1]);
  else if (op == BFRT_NC_MATMUL || op == BFRT_NC_MATMUL_ACC)
    body = nc_matmul_cycles(c, src[0], dst[0], dst[1], elem_bytes);
  else if (op == BFRT_TRANSPOSE || (op == BFRT_NC_TRANSPOSE && kind == BFRT_KIND_PE))
    body = matmul_cycles(c, dst[0], src[0], dst[1]);
  else body = lane_cycles(c, op, shape);
  return (bfrt_op_time){add_cycles(c->overhead, body), add_cycles(c->overhead, body), 0, 0};
}

bfrt_op_time bfrt_op_timing(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                            const int64_t src[2]) {
  return bfrt_op_timing_sized(costs, kind, op, dst, src, 4);
}

int64_t bfrt_op_cycles(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                       const int64_t src[2]) {
  return bfrt_op_timing(costs, kind, op, dst, src).completion;
}

int64_t bfrt_op_window(const bfrt_costs *costs, int kind) {
  if (!costs || kind < 0 || kind >= BFRT_NKINDS || !pipelined(costs, kind)) return 1;
  return costs->kind[kind].dma_outstanding;
}

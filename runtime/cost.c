/* cost.c: how many cycles an op takes on an engine, from the target's cost
 * model. The simulator charges it, and the oracle's ideal makespan uses
 * the same function, so the two are comparable.
 *
 * The model is deliberately simple (the simulator's engineer refines it):
 *   every op          overhead (issue) + its body;
 *   dma               latency + bytes / bandwidth;
 *   matmul            the systolic array holds a pe_rows x pe_cols block of
 *                     the stationary operand, so [M,K]·[K,N] takes
 *                     ceil(K/pe_rows) * ceil(N/pe_cols) passes, each
 *                     streaming the M rows of the moving operand at
 *                     elems_per_cycle rows per cycle;
 *   transpose         a matmul by the identity: [C,R] = [C,R]·[R,R];
 *   everything else   the elements touched (the larger of destination and
 *                     source) over the class's elements per cycle.
 * A throughput of zero or less counts as one per cycle, so a partial
 * target file cannot divide by zero. */
#include <math.h>

#include "rt.h"

static double rate(double r) { return r > 0 ? r : 1.0; }

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

static int64_t matmul_cycles(const bfrt_engine_cost *c, int64_t m, int64_t k, int64_t n) {
  int64_t passes = ceil_div(k, c->pe_rows) * ceil_div(n, c->pe_cols);
  return passes * (int64_t)ceil((double)m / rate(c->elems_per_cycle[BFRT_CLASS_MATMUL]));
}

int64_t bfrt_op_cycles(const bfrt_costs *costs, int kind, int op, const int64_t dst[2],
                       const int64_t src[2]) {
  if (!costs || kind < 0 || kind >= BFRT_NKINDS || op < 0 || op >= BFRT_NOPS) return 0;
  const bfrt_engine_cost *c = &costs->kind[kind];
  int64_t dst_elems = dst[0] * dst[1], src_elems = src[0] * src[1];
  int64_t elems = dst_elems > src_elems ? dst_elems : src_elems;
  int cls = rt_ops[op].cls;
  if (op == BFRT_MATMUL || op == BFRT_MATMUL_ACC) return c->overhead + matmul_cycles(c, dst[0], src[1], dst[1]);
  if (op == BFRT_TRANSPOSE) return c->overhead + matmul_cycles(c, dst[0], src[0], dst[1]);
  if (cls == BFRT_CLASS_DMA)
    return c->overhead + c->dma_latency +
           (int64_t)ceil((double)elems * (double)sizeof(float) / rate(c->dma_bytes_per_cycle));
  return c->overhead + (int64_t)ceil((double)elems / rate(c->elems_per_cycle[cls]));
}

/* semantics.h: what each op computes, in f32, implemented once
 * (runtime/semantics.c) and shared by the runtime's executors and the
 * compiler's sequential reference executor, so results can be compared bit
 * for bit. Not part of the public API. */
#ifndef SEMANTICS_H
#define SEMANTICS_H

#include <stdint.h>

/* A 2-D f32 view: row-major, stride elements between rows (a tile slot has
 * stride == cols; an hbm tile has the tensor's cols). dtype: the storage
 * type (BFRT_DTYPE_*, 0 = f32), to which a store rounds. */
typedef struct SemView {
  float *data;
  int64_t rows, cols, stride;
  int dtype;
} SemView;

/* Apply op (BFRT_<OP>) to its operands, destination first: v[i] the view
 * of a tile or hbm operand i (data NULL for an immediate), imm[i] the
 * value of an immediate operand i (an ALU op or function name as its
 * code), in f32; then round what it wrote to each written view's dtype.
 * Shapes are already checked. Matmul accumulates k = 0 .. K-1 in order. */
void sem_apply(int op, const SemView *v, const float *imm);
/* Round every element of v to v.dtype (a no-op for f32). */
void sem_round_view(SemView v);
/* Whether comparison code (BFRT_ALU_EQUAL ..) holds between a and 0: the
 * condition of affine_select, in f32 here and in the f64 reference. */
int sem_holds(int code, double a);

#endif

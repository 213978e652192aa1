/* ops.h: the compiler's view of the op table (runtime/ops.def): each op's
 * name, operand signature, the engine kinds that can run it and its shape
 * rule. Sema checks instructions against it; later passes read which
 * operands are tiles, hbm tiles or immediates from it. */
#ifndef OPS_H
#define OPS_H

/* Operands after the destination, destination first: T tile, H hbm tile, F immediate. */
typedef enum Signature { SIG_T_H, SIG_H_T, SIG_T_TT, SIG_T_T, SIG_T_F, SIG_T_TF } Signature;

/* How operand shapes must relate (shapes are [rows, cols]). */
typedef enum ShapeRule {
  SHAPE_SAME,      /* every tile operand has the destination's shape; an hbm tile takes it */
  SHAPE_MATMUL,    /* dst [M,N] = a [M,K] . b [K,N] */
  SHAPE_TRANSPOSE, /* dst [N,M] = src [M,N] transposed */
  SHAPE_ROWREDUCE, /* dst [M,1] from src [M,N] */
  SHAPE_ROWBCAST,  /* dst [M,N] = src [M,N] op row [M,1] */
  SHAPE_COLBCAST,  /* dst [M,N] = src [M,N] op col [1,N] */
  SHAPE_NONE,      /* fill: no relation */
} ShapeRule;

typedef struct OpInfo {
  const char *name;
  Signature sig;
  unsigned engines; /* BFK_* bits (frontend/target.h) */
  ShapeRule shape;
  const char *operands; /* one letter per operand, destination first: T, H or F */
  int accuracy;         /* BFRT_ACC_* */
} OpInfo;

/* The entry of op (BFRT_<OP>). */
const OpInfo *op_info(int op);
/* The op called name, or -1. */
int op_lookup(const char *name);
/* The op called name whose operand letters are kinds (T, H, F, and ? for
 * an operand that did not resolve); the first called name when none fits
 * (sema then reports the operand that does not); -1 when no op is. */
int op_lookup_for(const char *name, const char *kinds);

#endif

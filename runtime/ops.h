/* ops.h: the op vocabulary, one table for the compiler and the runtime.
 *
 * runtime/ops.def declares every op once; this header gives its columns
 * their types (the operand signature, the engine kinds, the shape rule,
 * the cost class) and rt_ops is the table itself, built from ops.def in
 * runtime/ops.c. Sema, the dependence analysis, the generator, the
 * runtime's operand checks and the cost model all read this one table.
 *
 * Like the rest of the runtime this includes nothing from the compiler. */
#ifndef BFRT_OPS_H
#define BFRT_OPS_H

#include "bfrt_cost.h"
#include "bfrt_kernel.h"

/* Engine-kind bits, the engines column of ops.def. */
enum {
  BFK_PE = 1 << BFRT_KIND_PE,
  BFK_ACT = 1 << BFRT_KIND_ACT,
  BFK_DVE = 1 << BFRT_KIND_DVE,
  BFK_POOL = 1 << BFRT_KIND_POOL,
  BFK_DMA = 1 << BFRT_KIND_DMA,
};
/* The engine kinds' names, by BFRT_KIND_*: as target files and messages
 * spell them (runtime/ops.c, the one place). */
extern const char *const rt_kind_names[BFRT_NKINDS];

/* Accuracy classes: how far an op's f32 result may be from the exact value
 * (docs/language.md, "Numerical checks"): EXACT (a copy, a comparison),
 * ROUND (one f32 rounding), LIBM (a libm function, a few ulp), SUM (an
 * accumulation whose error grows with its length). */
enum { BFRT_ACC_EXACT, BFRT_ACC_ROUND, BFRT_ACC_LIBM, BFRT_ACC_SUM, BFRT_NACCS };

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
  unsigned engines; /* BFK_* bits */
  ShapeRule shape;
  int cls;              /* BFRT_CLASS_*: its throughput in the cost model */
  const char *operands; /* one letter per operand, destination first: T, H or F */
  int accuracy;         /* BFRT_ACC_*: its tolerance against the f64 reference */
} OpInfo;

/* Indexed by BFRT_<OP>. */
extern const OpInfo rt_ops[BFRT_NOPS];

/* The entry of op (BFRT_<OP>). */
const OpInfo *op_info(int op);
/* The op called name, or -1. */
int op_lookup(const char *name);
/* The op called name whose operand letters are kinds (T, H, F, and ? for
 * an operand that did not resolve); the first called name when none fits
 * (sema then reports the operand that does not); -1 when no op is. */
int op_lookup_for(const char *name, const char *kinds);

#endif

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

/* The most operands an op takes, destination first. */
#define BFRT_MAX_OPERANDS 7

/* An op's operands, destination first, and what it does with each: the
 * signatures' SIG lines in ops.def (kinds and roles), one letter per operand.
 *   kinds: T a tile, H an hbm tile X[r, c], F an immediate (a float, or a
 *          name from a vocabulary, carried as its code: see roles);
 *   roles: w written, a read and written (accumulated into), r read,
 *          - a float immediate, o an ALU op name (BFRT_ALU_*), f an
 *          activation function name (BFRT_FN_*), n the word `negate`.
 * The dependence analysis, the race checker, the references and the
 * simulator take an op's reads and writes from these roles and nowhere
 * else (bfrt_op_reads, bfrt_op_writes). */
typedef enum Signature {
#define SIG(id, kinds, roles) id,
#include "ops.def"
#undef SIG
  BFRT_NSIGS
} Signature;

/* The names an operand of role o takes (NKI's nl.add, nl.subtract, ...,
 * and the comparisons, which give 1.0 or 0.0), and of role f (NKI's
 * activation functions), each carried as its code in the immediate. */
#define BFRT_ALU_NAMES(X) X(ADD, "add") X(SUBTRACT, "subtract") X(MULTIPLY, "multiply") \
  X(MAXIMUM, "maximum") X(MINIMUM, "minimum") X(EQUAL, "equal") X(NOT_EQUAL, "not_equal") \
  X(GREATER, "greater") X(GREATER_EQUAL, "greater_equal") X(LESS, "less") X(LESS_EQUAL, "less_equal")
#define BFRT_FN_NAMES(X) X(COPY, "copy") X(EXP, "exp") X(TANH, "tanh") X(RELU, "relu") \
  X(SIGMOID, "sigmoid") X(GELU, "gelu_apprx_tanh") X(SILU, "silu") X(SQUARE, "square") \
  X(SQRT, "sqrt") X(RSQRT, "rsqrt") X(ABS, "abs") X(RECIPROCAL, "reciprocal")
enum {
#define X(id, name) BFRT_ALU_##id,
  BFRT_ALU_NAMES(X)
#undef X
  BFRT_NALU
};
enum {
#define X(id, name) BFRT_FN_##id,
  BFRT_FN_NAMES(X)
#undef X
  BFRT_NFN
};
extern const char *const bfrt_alu_names[BFRT_NALU];
extern const char *const bfrt_fn_names[BFRT_NFN];

/* How operand shapes must relate (shapes are [rows, cols]). */
typedef enum ShapeRule {
  SHAPE_SAME,      /* every tile operand has the destination's shape; an hbm tile takes it */
  SHAPE_MATMUL,    /* dst [M,N] = a [M,K] . b [K,N] */
  SHAPE_TRANSPOSE, /* dst [N,M] = src [M,N] transposed */
  SHAPE_ROWREDUCE, /* dst [M,1] from src [M,N] */
  SHAPE_ROWBCAST,  /* dst [M,N] = src [M,N] op row [M,1] */
  SHAPE_COLBCAST,  /* dst [M,N] = src [M,N] op col [1,N] */
  SHAPE_NONE,      /* fill: no relation */
  SHAPE_NC_MATMUL, /* dst [M,N] = stationary [K,M]^T . moving [K,N] */
  SHAPE_ROWREDUCE_OF, /* tensor_reduce: dst [M,1] from operand 2 [M,N] */
  SHAPE_SCALAR,    /* tensor_scalar: dst, s [M,N]; tile operands [M,1] */
  SHAPE_ACTIVATION, /* activation: dst, s [M,N]; bias, acc [M,1] */
  SHAPE_SCAN,      /* tensor_tensor_scan: dst, data0, data1 [M,N]; a tile initial [M,1] */
  SHAPE_SELECT,    /* affine_select: dst, on_true [M,N] */
  SHAPE_BN_STATS,  /* dst [M,6] from s [M,N] */
  SHAPE_BN_AGGR,   /* dst [M,2] from s [M,3k] */
} ShapeRule;

typedef struct OpInfo {
  const char *name;
  Signature sig;
  unsigned engines; /* BFK_* bits */
  ShapeRule shape;
  int cls;              /* BFRT_CLASS_*: its throughput in the cost model */
  const char *operands; /* one letter per operand, destination first: T, H or F */
  const char *roles;    /* one letter per operand: w, a, r, -, o, f, n (see Signature) */
  int accuracy;         /* BFRT_ACC_*: its tolerance against the f64 reference */
} OpInfo;

/* Indexed by BFRT_<OP>. */
extern const OpInfo rt_ops[BFRT_NOPS];

/* Whether op reads, or writes, its operand i (destination first). */
static inline int bfrt_op_reads(int op, int i) {
  char r = rt_ops[op].roles[i];
  return r == 'r' || r == 'a';
}
static inline int bfrt_op_writes(int op, int i) {
  char r = rt_ops[op].roles[i];
  return r == 'w' || r == 'a';
}
/* The operand the cost model sizes an op by beside its destination: the
 * first tile or hbm operand it reads after the destination (tensor_reduce's
 * data, activation's input), or the destination when it reads none (fill,
 * iota). */
static inline int bfrt_op_source(int op) {
  for (int i = 1; rt_ops[op].roles[i]; i++)
    if (rt_ops[op].roles[i] == 'r') return i;
  return 0;
}
/* The bytes per element the cost model charges op, from its destination's
 * and its source's: a transfer moves the wider; TensorE streams its inputs
 * (its destination is always fp32 PSUM), so the source's. */
static inline int bfrt_op_elem_bytes(int op, int dst_bytes, int src_bytes) {
  int bytes = rt_ops[op].cls == BFRT_CLASS_MATMUL ? src_bytes : dst_bytes > src_bytes ? dst_bytes : src_bytes;
  return bytes > 0 ? bytes : 4;
}

/* The entry of op (BFRT_<OP>). */
const OpInfo *op_info(int op);
/* The op called name, or -1. */
int op_lookup(const char *name);
/* The op called name whose operand letters are kinds (T, H, F, and ? for
 * an operand that did not resolve); the first called name when none fits
 * (sema then reports the operand that does not); -1 when no op is. */
int op_lookup_for(const char *name, const char *kinds);

#endif

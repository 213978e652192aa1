/* ops.c: the op table (see ops.h), generated from ops.def so the compiler
 * and the runtime can never disagree about which ops exist or what they
 * take. */
#include "ops.h"

/* Operand letters of each signature, destination first. */
#define OPERANDS_SIG_T_H "TH"
#define OPERANDS_SIG_H_T "HT"
#define OPERANDS_SIG_T_TT "TTT"
#define OPERANDS_SIG_T_T "TT"
#define OPERANDS_SIG_T_F "TF"
#define OPERANDS_SIG_T_TF "TTF"

const OpInfo rt_ops[BFRT_NOPS] = {
#define OP(id, name, sig, engines, shape, cls, acc) \
  [BFRT_##id] = {name, sig, engines, shape, BFRT_CLASS_##cls, OPERANDS_##sig, BFRT_ACC_##acc},
#include "ops.def"
#undef OP
};

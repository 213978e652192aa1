/* ops.c: the op table, generated from runtime/ops.def so the compiler and
 * the runtime can never disagree about which ops exist or what they take. */
#include "frontend/ops.h"

#include <string.h>

#include "frontend/arena.h"
#include "frontend/target.h"

/* Operand letters of each signature, destination first. */
#define OPERANDS_SIG_T_H "TH"
#define OPERANDS_SIG_H_T "HT"
#define OPERANDS_SIG_T_TT "TTT"
#define OPERANDS_SIG_T_T "TT"
#define OPERANDS_SIG_T_F "TF"
#define OPERANDS_SIG_T_TF "TTF"

static const OpInfo op_table[BFRT_NOPS] = {
#define OP(id, name, sig, engines, shape, cls, acc) \
  [BFRT_##id] = {name, sig, engines, shape, OPERANDS_##sig, BFRT_ACC_##acc},
#include "runtime/ops.def"
#undef OP
};

const OpInfo *op_info(int op) {
  if (op < 0 || op >= BFRT_NOPS) bug("op_info: no op %d", op);
  return &op_table[op];
}

int op_lookup_for(const char *name, const char *kinds) {
  for (int op = 0; op < BFRT_NOPS; op++)
    if (!strcmp(op_table[op].name, name) && !strcmp(op_table[op].operands, kinds)) return op;
  return op_lookup(name);
}

int op_lookup(const char *name) {
  for (int op = 0; op < BFRT_NOPS; op++)
    if (!strcmp(op_table[op].name, name)) return op;
  return -1;
}

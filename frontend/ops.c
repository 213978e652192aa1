/* ops.c: lookups in the op table (runtime/ops.c). */
#include "frontend/ops.h"

#include <string.h>

#include "util/diag.h"

const OpInfo *op_info(int op) {
  if (op < 0 || op >= BFRT_NOPS) bug("op_info: no op %d", op);
  return &rt_ops[op];
}

int op_lookup_for(const char *name, const char *kinds) {
  for (int op = 0; op < BFRT_NOPS; op++)
    if (!strcmp(rt_ops[op].name, name) && !strcmp(rt_ops[op].operands, kinds)) return op;
  return op_lookup(name);
}

int op_lookup(const char *name) {
  for (int op = 0; op < BFRT_NOPS; op++)
    if (!strcmp(rt_ops[op].name, name)) return op;
  return -1;
}

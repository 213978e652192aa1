/* ops.c: the op table (see ops.h), generated from ops.def so the compiler
 * and the runtime can never disagree about which ops exist or what they
 * take, and the lookups in it by id and by name. */
#include "ops.h"

#include <string.h>

#include "util/diag.h"

/* Each signature's operand kinds and roles, destination first (ops.def's
 * SIG lines), as arrays whose addresses the table below holds. */
#define SIG(id, kinds, roles) static const char kinds_##id[] = kinds, roles_##id[] = roles;
#include "ops.def"
#undef SIG

const char *const bfrt_alu_names[BFRT_NALU] = {
#define X(id, name) name,
    BFRT_ALU_NAMES(X)
#undef X
};
const char *const bfrt_fn_names[BFRT_NFN] = {
#define X(id, name) name,
    BFRT_FN_NAMES(X)
#undef X
};

const char *const rt_kind_names[BFRT_NKINDS] = {
    [BFRT_KIND_PE] = "pe", [BFRT_KIND_ACT] = "act", [BFRT_KIND_DVE] = "dve",
    [BFRT_KIND_POOL] = "pool", [BFRT_KIND_DMA] = "dma",
};

const OpInfo rt_ops[BFRT_NOPS] = {
#define OP(id, name, sig, engines, shape, cls, acc) \
  [BFRT_##id] = {name, sig, engines, shape, BFRT_CLASS_##cls, kinds_##sig, roles_##sig, BFRT_ACC_##acc},
#include "ops.def"
#undef OP
};

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

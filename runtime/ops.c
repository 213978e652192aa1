/* ops.c: the op table (see ops.h), generated from ops.def so the compiler
 * and the runtime can never disagree about which ops exist or what they
 * take, and the lookups in it by id and by name. */
#include "ops.h"

#include <string.h>

#include "util/diag.h"

/* Each signature's operand kinds and roles, destination first (ops.h). */
#define KINDS_SIG_T_H "TH"
#define ROLES_SIG_T_H "wr"
#define KINDS_SIG_H_T "HT"
#define ROLES_SIG_H_T "wr"
#define KINDS_SIG_T_TT "TTT"
#define ROLES_SIG_T_TT "wrr"
#define KINDS_SIG_T_T "TT"
#define ROLES_SIG_T_T "wr"
#define KINDS_SIG_T_F "TF"
#define ROLES_SIG_T_F "w-"
#define KINDS_SIG_T_TF "TTF"
#define ROLES_SIG_T_TF "wr-"
#define KINDS_SIG_A_TT "TTT"
#define ROLES_SIG_A_TT "arr"
#define KINDS_SIG_T_FFF "TFFF"
#define ROLES_SIG_T_FFF "w---"
#define KINDS_SIG_T_FFFTFO "TFFFTFF"
#define ROLES_SIG_T_FFFTFO "w---r-o"
#define KINDS_SIG_T_OT "TFT"
#define ROLES_SIG_T_OT "wor"
#define KINDS_SIG_T_OTN "TFTF"
#define ROLES_SIG_T_OTN "worn"
#define KINDS_SIG_T_TOF "TTFF"
#define ROLES_SIG_T_TOF "wro-"
#define KINDS_SIG_T_TOT "TTFT"
#define ROLES_SIG_T_TOT "wror"
#define KINDS_SIG_T_TOFOF "TTFFFF"
#define ROLES_SIG_T_TOFOF "wro-o-"
#define KINDS_SIG_T_TOTOT "TTFTFT"
#define ROLES_SIG_T_TOTOT "wroror"
#define KINDS_SIG_T_FT "TFT"
#define ROLES_SIG_T_FT "wfr"
#define KINDS_SIG_T_FTTF "TFTTF"
#define ROLES_SIG_T_FTTF "wfrr-"
#define KINDS_SIG_T_FTTFA "TFTTFT"
#define ROLES_SIG_T_FTTFA "wfrr-a"
#define KINDS_SIG_T_TTFOO "TTTFFF"
#define ROLES_SIG_T_TTFOO "wrr-oo"
#define KINDS_SIG_T_TTTOO "TTTTFF"
#define ROLES_SIG_T_TTTOO "wrrroo"

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

const OpInfo rt_ops[BFRT_NOPS] = {
#define OP(id, name, sig, engines, shape, cls, acc) \
  [BFRT_##id] = {name, sig, engines, shape, BFRT_CLASS_##cls, KINDS_##sig, ROLES_##sig, BFRT_ACC_##acc},
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

/* ops.h: the compiler's access to the op table (runtime/ops.h, built from
 * runtime/ops.def): each op's name, operand signature, the engine kinds
 * that can run it and its shape rule. Sema checks instructions against it;
 * later passes read which operands are tiles, hbm tiles or immediates. */
#ifndef OPS_H
#define OPS_H

#include "runtime/ops.h"

/* The entry of op (BFRT_<OP>). */
const OpInfo *op_info(int op);
/* The op called name, or -1. */
int op_lookup(const char *name);
/* The op called name whose operand letters are kinds (T, H, F, and ? for
 * an operand that did not resolve); the first called name when none fits
 * (sema then reports the operand that does not); -1 when no op is. */
int op_lookup_for(const char *name, const char *kinds);

#endif

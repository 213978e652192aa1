/* ir_dump.h: the kernel in the serialized form the Coq development's
 * extracted checker reads (proof/bfcheck.ml, docs/proof.md). */
#ifndef IR_DUMP_H
#define IR_DUMP_H

#include <stdio.h>

#include "frontend/program.h"

/* Requires: a checked kernel. Ensures: `bfsync-proof 2`, then the kernel
 * as the source gives it (ops, operands, shapes, device integers' values
 * when bound), on out. */
void ir_dump_proof(const Program *p, FILE *out);
/* Why the kernel is outside the proof's model (a gather or scatter by
 * run-time index, issue 22), or NULL: its dump would not say which rows
 * such an operand touches. */
const char *ir_dump_outside(const Program *p);

#endif

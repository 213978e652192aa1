/* ir_dump.h: the kernel and its synchronized streams in the serialized
 * form the Coq development's extracted checker reads (proof/bfcheck.ml,
 * docs/proof.md). */
#ifndef IR_DUMP_H
#define IR_DUMP_H

#include <stdio.h>

#include "frontend/program.h"
#include "transform/ir.h"

/* Requires: a checked kernel and p->ir. Ensures: `bfsync-proof 1`, then the
 * kernel as the proof models it and every engine's stream, on out; returns
 * NULL, or what the kernel uses that the proof's model lacks (then the
 * dump is incomplete and must not be checked). */
const char *ir_dump_proof(Program *p, FILE *out);

#endif

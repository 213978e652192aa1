/* target.h: the machine a kernel is compiled for, in one table: its engines,
 * the kind of each (which decides the ops it can run, see runtime/ops.def),
 * and the simulator's cost model. The default target is trn1; more are read
 * from target files (targets/NAME.target, see docs/targets.md). */
#ifndef TARGET_H
#define TARGET_H

#include <stdio.h>

#include "frontend/arena.h"
#include "runtime/ops.h" /* BFK_* engine-kind bits, the cost model */

typedef struct Engine {
  const char *name; /* as written in kernels: pe, act, dve, pool, dma, dma1, ... */
  int kind;         /* BFRT_KIND_* */
} Engine;

typedef struct Target {
  const char *name;
  int nengines;
  Engine engines[BFRT_MAX_ENGINES];
  bfrt_costs costs;
} Target;

/* The built-in default target: targets/trn1.target, embedded in the binary
 * (pe act dve pool dma, NeuronCore-v2 costs). */
const Target *target_default(void);
/* Index of the engine called name, or -1. */
int target_engine(const Target *t, const char *name);
/* Whether engine e can run op. */
int target_can_run(const Target *t, int engine, int op);

/* Read the target file at path (format: docs/targets.md) into *out, its
 * strings in arena; 0, or -1 after positioned errors
 * (file:line:col: error: ...) on err. frontend/target_file.c */
int target_load(const char *path, Arena *arena, Target *out, FILE *err);
/* The same for a file's text (len bytes, may hold NUL bytes), named path. */
int target_parse(const char *path, const char *text, size_t len, Arena *arena, Target *out, FILE *err);

#endif

/* program.h: one compilation, and the passes that run over it.
 *
 * Every pass has the shape `void pass(Program *)`; the driver writes the
 * pipeline out as straight-line calls and validates after each pass:
 *
 *   parse -> check -> transform_barrier_free | transform_barrier -> ir_validate
 *         -> emit_c | oracle | reference
 *
 * User errors are counted in p->diag; a pass that finds some leaves the rest
 * of the pipeline to be skipped by the driver. */
#ifndef PROGRAM_H
#define PROGRAM_H

#include "frontend/arena.h"
#include "frontend/ast.h"
#include "frontend/diag.h"
#include "frontend/target.h"
#include "transform/ir.h"

typedef struct Program {
  Arena *arena;
  Source src;
  Diag diag;
  const Target *target;
  Kernel *kernel; /* parse */
  IrProgram *ir;  /* transform */
  /* The run's device integers, for the reference and the oracle: the
   * storage of each i32 tensor (NULL for f32) and every tensor's shape;
   * NULL when no run has set them (see EvalEnv). */
  const void *const *device_ints;
  const int64_t (*device_shape)[2];
} Program;

/* A new program for the file's text (copied into the arena); diagnostics go to out. */
Program *program_new(const char *path, const char *text, size_t len, const Target *target,
                     FILE *out);
/* Read path ("-": standard input) into a new program; NULL (with a message
 * on out) if unreadable. */
Program *program_load(const char *path, const Target *target, FILE *out);
/* Free the program and its arena. */
void program_free(Program *p);

/* Requires: src. Ensures: kernel (unresolved) or errors. dsl/parser.y */
void parse(Program *p);
/* Requires: kernel from parse. Ensures: names resolved, ids numbered, every
 * semantic rule checked, or errors. frontend/sema.c */
void check(Program *p);
/* Requires: a checked kernel. Ensures: the kernel in canonical syntax on out. frontend/fmt.c */
void fmt(const Program *p, FILE *out);

/* Requires: a checked kernel. Ensures: ir with exact counter waits and no
 * barrier. transform/barrier_free.c */
void transform_barrier_free(Program *p);
/* Requires: a checked kernel. Ensures: ir with a barrier at every loop
 * iteration boundary and static thresholds between them. transform/barrier.c */
void transform_barrier(Program *p);

#endif

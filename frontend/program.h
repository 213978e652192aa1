/* program.h: one compilation, and the passes that run over it.
 *
 * Every pass has the shape `void pass(Program *)`; the driver writes the
 * pipeline out as straight-line calls and validates after each pass:
 *
 *   parse -> check -> transform_sync (a sync mode's pass, transform/sync.h)
 *         -> ir_validate -> emit_c | oracle | reference
 *
 * User errors are counted in p->diag; a pass that finds some leaves the rest
 * of the pipeline to be skipped by the driver. */
#ifndef PROGRAM_H
#define PROGRAM_H

#include "util/arena.h"
#include "frontend/ast.h"
#include "util/diag.h"
#include "target/target.h"

/* The IR is the transform's (transform/ir.h); a program only points to it. */
struct IrProgram;

typedef struct Program {
  Arena *arena;
  Source src;
  Diag diag;
  const Target *target;
  Kernel *kernel; /* parse */
  struct IrProgram *ir; /* transform */
  /* The run's device integers, for the reference and the oracle: the
   * storage of each i32 tensor (NULL for f32) and every tensor's shape;
   * NULL when no run has set them (see EvalEnv). */
  const void *const *device_ints;
  const int64_t (*device_shape)[2];
  /* The run's parameters in the kernel's order, for a transform that
   * specializes to them (--sync=unrolled); NULL when none are bound. */
  const int64_t *params;
  /* How many steps (instructions and loop iterations) the reference and the
   * oracle may walk before they stop with an error; run and verify set it
   * from --max-steps. */
  int64_t max_steps;
} Program;

/* The default step limit. A run of 10^8 steps takes about two minutes
 * (reference, f64 reference and simulator, measured at about 1.2 us per
 * instruction) and the simulator keeps 8 bytes per instruction, so a kernel
 * whose parameters ask for more (say 190 nested loops of 2 trips) stops
 * with a message naming the limit instead of appearing to hang. */
#define DEFAULT_MAX_STEPS ((int64_t)100000000)
/* The message for a walk that reached p->max_steps ("... more than N steps"). */
const char *steps_exceeded(const Program *p);

/* A new program for the file's text (copied into the arena); diagnostics go to out. */
Program *program_new(const char *path, const char *text, size_t len, const Target *target,
                     FILE *out);
/* The largest kernel file program_load reads (256 MiB: a kernel of a
 * million instructions is about 30 MB; spans are 32-bit offsets). */
#define MAX_SOURCE_BYTES (256 << 20)
/* Read path ("-": standard input) into a new program that prints warnings;
 * NULL (with a message on out) if unreadable or larger than MAX_SOURCE_BYTES. */
Program *program_load(const char *path, const Target *target, FILE *out);
/* The kernel file may name its target in a line `// target: FILE` (FILE
 * relative to the kernel file's folder); when it does, load that target
 * into p (in p's arena). 0 (also when there is no such line), or -1 after
 * the target file's errors on out. Commands call it when no --target is
 * given, so a kernel for another machine checks and formats without flags. */
int program_use_target_line(Program *p, FILE *out);
/* A line of the kernel file that begins with `// NAME:` (a directive:
 * `// params:`, `// target:`): where the line starts and its value, the
 * rest of the line trimmed of blanks. */
typedef struct Directive {
  Span mark;  /* "// NAME:" */
  Span value; /* empty when the line has nothing after the colon */
} Directive;
/* Every `// NAME:` line of the source, in order, into *lines (in p's
 * arena); how many. The one directive scanner. */
int program_directives(const Program *p, const char *name, Directive **lines);
/* Free the program and its arena. */
void program_free(Program *p);
/* The 1-based source line where span starts (what messages, the IR and
 * the generated code cite). */
int line_of(const Program *p, Span span);

/* Requires: src. Ensures: kernel (unresolved) or errors. dsl/parser.y */
void parse(Program *p);
/* Requires: kernel from parse. Ensures: names resolved, ids numbered, every
 * semantic rule checked, or errors. frontend/sema.c */
void check(Program *p);
/* Requires: a checked kernel without errors. Ensures: a warning at every
 * read of a tile slot that nothing can have written the first time the
 * read runs (check runs it when p->diag.warn). frontend/written.c */
void check_tiles_written(Program *p);
/* Requires: a checked kernel. Ensures: each `dma:` transfer on a DMA queue,
 * round robin in program order, when the target has queues but no engine
 * called "dma" (check runs it last). frontend/queues.c */
void assign_queues(Program *p);
/* The queue assign_queues gave each `dma:` transfer, one comment line each
 * (bfsync compile --explain). frontend/queues.c */
void queues_explain(const Program *p, FILE *out);
/* Requires: a checked kernel. Ensures: the kernel in canonical syntax on out. frontend/fmt.c */
void fmt(const Program *p, FILE *out);
/* Requires: a checked kernel. Ensures: its hbm tensors, then its tiles, one
 * declaration a line with the resolved element type and the tiles' shapes
 * evaluated (the storage the IR works on; --emit=ir). frontend/fmt.c */
void fmt_storage(const Kernel *k, FILE *out);

#endif

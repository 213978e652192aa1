/* target.c: the built-in default target, trn1, and lookups over a Target.
 *
 * A target is data: its engines (name and kind) and its cost model. Which
 * ops an engine can run follows from its kind through the op table, so a
 * target with several DMA queues (dma, dma1, ...) needs no code.
 *
 * The default must be exactly targets/trn1.target, and values kept in two
 * places drift, so the file itself is built into the binary (the
 * assembler's .incbin, relative to the repository root where make runs)
 * and parsed by the same reader as any --target file, once, on first use.
 * The parsed Target is a constant from then on; a parse failure is a bug
 * in the shipped file (tests/sim.sh checks it against --target). */
#include "frontend/target.h"

#include <pthread.h>
#include <string.h>

#include "frontend/diag.h"
#include "frontend/ops.h"

extern const char bf_trn1_target_text[], bf_trn1_target_end[];
__asm__(".section .rodata\n"
        ".global bf_trn1_target_text\n"
        ".global bf_trn1_target_end\n"
        "bf_trn1_target_text:\n"
        ".incbin \"targets/trn1.target\"\n"
        "bf_trn1_target_end:\n"
        ".byte 0\n"
        ".previous\n");

typedef struct Builtin {
  pthread_once_t once;
  Arena *arena;
  Target target;
} Builtin;

static Builtin builtin = {PTHREAD_ONCE_INIT, NULL, {0}};

static void parse_builtin(void) {
  builtin.arena = arena_new();
  size_t len = (size_t)(bf_trn1_target_end - bf_trn1_target_text);
  if (target_parse("targets/trn1.target (built in)", bf_trn1_target_text, len, builtin.arena, &builtin.target,
                   stderr))
    bug("the built-in target does not parse");
}

const Target *target_default(void) {
  pthread_once(&builtin.once, parse_builtin);
  return &builtin.target;
}

int target_engine(const Target *t, const char *name) {
  for (int e = 0; e < t->nengines; e++)
    if (!strcmp(t->engines[e].name, name)) return e;
  return -1;
}

int target_can_run(const Target *t, int engine, int op) {
  if (engine < 0 || engine >= t->nengines || op < 0 || op >= BFRT_NOPS) return 0;
  return (op_info(op)->engines >> t->engines[engine].kind) & 1;
}

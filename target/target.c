/* target.c: the built-in default target, trn1, and lookups over a Target.
 *
 * A target is data: its engines (name and kind) and its cost model. Which
 * ops an engine can run follows from its kind through the op table, so a
 * target with several DMA queues (dma0, dma1, ...) needs no code. On a
 * target with no engine called "dma", a kernel's `dma:` names "any DMA
 * queue": it resolves to the first queue, and assign_queues
 * (frontend/queues.c) then picks each transfer's queue.
 *
 * The default must be exactly targets/trn1.target, and values kept in two
 * places drift, so the file itself is built into the binary (the
 * assembler's .incbin, relative to the repository root where make runs)
 * and parsed by the same reader as any --target file, once, on first use.
 * The parsed Target is a constant from then on; a parse failure is a bug
 * in the shipped file (tests/sim.sh checks it against --target). */
#include "target/target.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/diag.h"
#include "runtime/ops.h"

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
  return target_any_queue(t, name) ? target_queue(t, 0) : -1;
}

int target_any_queue(const Target *t, const char *name) {
  if (!name || strcmp(name, "dma")) return 0;
  for (int e = 0; e < t->nengines; e++)
    if (!strcmp(t->engines[e].name, name)) return 0;
  return target_queue(t, 0) >= 0;
}

int target_nqueues(const Target *t) {
  int n = 0;
  for (int e = 0; e < t->nengines; e++) n += t->engines[e].kind == BFRT_KIND_DMA;
  return n;
}

int target_queue(const Target *t, int q) {
  for (int e = 0; e < t->nengines; e++)
    if (t->engines[e].kind == BFRT_KIND_DMA && q-- == 0) return e;
  return -1;
}

/* A run of engines of one kind, start .. end - 1, that can run op. */
static int run_end(const Target *t, int op, int start) {
  int end = start + 1;
  while (end < t->nengines && t->engines[end].kind == t->engines[start].kind && target_can_run(t, end, op)) end++;
  return end;
}

void target_engine_names(const Target *t, int op, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int e = 0; e < t->nengines && n < size;) {
    if (op >= 0 && !target_can_run(t, e, op)) {
      e++;
      continue;
    }
    int end = op >= 0 ? run_end(t, op, e) : e + 1;
    while (op < 0 && end < t->nengines && t->engines[end].kind == t->engines[e].kind) end++;
    if (end - e >= 3)
      n += (size_t)snprintf(buf + n, size - n, "%s%s..%s", n ? ", " : "", t->engines[e].name, t->engines[end - 1].name);
    else
      for (int i = e; i < end && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", t->engines[i].name);
    e = end;
  }
}

int target_can_run(const Target *t, int engine, int op) {
  if (engine < 0 || engine >= t->nengines || op < 0 || op >= BFRT_NOPS) return 0;
  return (op_info(op)->engines >> t->engines[engine].kind) & 1;
}

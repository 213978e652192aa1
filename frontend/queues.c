/* queues.c: which DMA queue runs each `dma:` transfer.
 *
 * A NeuronCore-v2 has 16 DMA queues, each an in-order stream with its own
 * completion counter (targets/trn1.target names them dma0 .. dma15). A
 * kernel writer keeps writing `dma: load ...`; on a target with queues but
 * no engine called "dma", that means "any queue", and this pass picks one.
 * Writing a queue's own name (`dma3: load ...`) pins the transfer there and
 * this pass leaves it alone.
 *
 * The policy is round robin in program order: the k-th `dma:` transfer of
 * the kernel, counting each instruction once however often it runs, goes to
 * queue k mod Q. It is deterministic, visible (--emit=ir prints each
 * queue's stream; --explain lists the assignment), and it spreads a
 * streaming kernel: a loop's load and its store land on different queues,
 * so a store waiting for the compute engines never holds back the next
 * iteration's load behind it in one in-order queue, and unrolled loads go
 * to as many queues as there are. The bandwidth is not multiplied by this:
 * every queue streams on the same 16 DMA engines (dma_split in the target,
 * shared in the simulator), as on the hardware. Pinned transfers do not
 * move the round robin, so adding one does not reshuffle the others.
 *
 * Each instruction stays one transfer on one queue: a transfer that the
 * hardware spreads over several DMA engines is modelled by its bandwidth
 * (dma_split), not by splitting it into several instructions, so the
 * synchronization stays exact per instruction. */
#include <stdio.h>
#include <string.h>

#include "frontend/program.h"

typedef struct Assigner {
  const Program *p;
  const Target *t;
  int nqueues;
  int next;  /* the round robin: transfers assigned so far */
  FILE *out; /* queues_explain: where each assigned transfer is listed */
} Assigner;

static void assign_list(Assigner *a, Stmt *s, const char *block_engine) {
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR: {
      const char *written = s->engine_name ? s->engine_name : block_engine;
      if (!target_any_queue(a->t, written)) break;
      int q = a->next++ % a->nqueues;
      if (a->out)
        fprintf(a->out, "// line %d: dma: %s -> %s (transfer %d, queue %d of %d)\n",
                source_line(&a->p->src, s->span.begin), s->op_name, a->t->engines[s->engine].name, a->next - 1, q,
                a->nqueues);
      else
        s->engine = target_queue(a->t, q);
      break;
    }
    case ST_FOR: assign_list(a, s->body, block_engine); break;
    case ST_BLOCK: assign_list(a, s->body, s->engine_name); break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF: assign_list(a, s->body, block_engine); assign_list(a, s->orelse, block_engine); break;
    }
  }
}

/* Ensures of assign_queues: every instruction is on an engine that runs its op. */
static void validate_list(const Program *p, const Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_INSTR && !target_can_run(p->target, s->engine, s->op))
      bug("assign_queues: line %d: engine %d cannot run op %d", source_line(&p->src, s->span.begin), s->engine,
          s->op);
    if (s->kind != ST_INSTR) validate_list(p, s->body);
    if (s->kind == ST_IF) validate_list(p, s->orelse);
  }
}

/* Requires: a checked kernel without errors. Ensures: every `dma:`
 * transfer on a target without an engine called "dma" is on queue
 * k mod Q (k its rank among them in program order); nothing else moves. */
void assign_queues(Program *p) {
  if (!p->kernel || p->diag.errors || !target_any_queue(p->target, "dma")) return;
  Assigner a = {p, p->target, target_nqueues(p->target), 0, NULL};
  assign_list(&a, p->kernel->body, NULL);
  validate_list(p, p->kernel->body);
}

void queues_explain(const Program *p, FILE *out) {
  if (!p->kernel || !target_any_queue(p->target, "dma")) return;
  Assigner a = {p, p->target, target_nqueues(p->target), 0, out};
  fprintf(out, "// DMA queues: each `dma:` transfer, round robin in program order (frontend/queues.c)\n");
  assign_list(&a, p->kernel->body, NULL);
}

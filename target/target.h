/* target.h: the machine a kernel is compiled for, in one table: its engines,
 * the kind of each (which decides the ops it can run, see runtime/ops.def),
 * and the simulator's cost model. The default target is trn1; more are read
 * from target files (targets/NAME.target, see docs/targets.md). */
#ifndef TARGET_H
#define TARGET_H

#include <stdio.h>

#include "util/arena.h"
#include "runtime/ops.h" /* BFK_* engine-kind bits, the cost model */

typedef struct Engine {
  const char *name; /* as written in kernels: pe, act, dve, pool, dma, dma1, ... */
  int kind;         /* BFRT_KIND_* */
} Engine;

/* Hardware limits sema enforces (the [limits] section of a target file);
 * 0 (or psum_kinds 0) means the target sets no such limit. */
typedef struct TargetLimits {
  int64_t partitions;               /* tile rows */
  int64_t sbuf_bytes_per_partition; /* all sbuf tiles and slots together */
  int64_t psum_bytes_per_partition; /* all psum tiles and slots together */
  int64_t psum_banks;               /* each psum slot fits one bank: psum bytes / banks */
  int64_t matmul_psum_f32;          /* 1: matmul and matmul_acc write an f32 psum tile */
  int64_t matmul_sbuf_inputs;       /* 1: matmul and matmul_acc read sbuf tiles */
  unsigned psum_kinds;              /* BFK_* bits of the engine kinds that may access psum */
} TargetLimits;

typedef struct Target {
  const char *name;
  int nengines;
  Engine engines[BFRT_MAX_ENGINES];
  bfrt_costs costs;
  TargetLimits limits;
  /* Finite hardware (docs/targets.md): a completion counter holds
   * counter_bits bits and wraps modulo 2^counter_bits (64 when the file does
   * not say); per engine kind, how many counters an engine can wait on and
   * how many integer registers its sequencer has (0: not limited). */
  int counter_bits;
  int64_t semaphores[BFRT_NKINDS], registers[BFRT_NKINDS];
} Target;

/* The most a counter may be past what a reader last saw of it and still
 * read exactly from its low bits: 2^counter_bits - 1 (INT64_MAX from 63
 * bits on; docs/algorithm.md, section 7). */
static inline int64_t target_counter_span(const Target *t) {
  return t->counter_bits >= 63 ? INT64_MAX : ((int64_t)1 << t->counter_bits) - 1;
}

/* The built-in default target: targets/trn1.target, embedded in the binary
 * (pe act dve pool dma, NeuronCore-v2 costs). */
const Target *target_default(void);
/* Index of the engine called name, or -1. "dma" on a target with DMA
 * queues but no engine called "dma" means any queue, and gives the first
 * (target_any_queue; assign_queues picks the queue). */
int target_engine(const Target *t, const char *name);
/* Whether name, as written before ':', means "any DMA queue" on t. */
int target_any_queue(const Target *t, const char *name);
/* The number of DMA queues (engines of kind dma), and the engine index of
 * queue q (0-based, in engine order), or -1. */
int target_nqueues(const Target *t);
int target_queue(const Target *t, int q);
/* The names of the engines that can run op (every engine when op < 0),
 * comma-separated into buf, three or more consecutive engines of one kind
 * as a range: "pe, act, dve, pool, dma0..dma15". */
void target_engine_names(const Target *t, int op, char *buf, size_t size);
/* Whether engine e can run op. */
int target_can_run(const Target *t, int engine, int op);

/* Read the target file at path (format: docs/targets.md) into *out, its
 * strings in arena; 0, or -1 after positioned errors
 * (file:line:col: error: ...) on err. target/target_file.c */
int target_load(const char *path, Arena *arena, Target *out, FILE *err);
/* The same for a file's text (len bytes, may hold NUL bytes), named path. */
int target_parse(const char *path, const char *text, size_t len, Arena *arena, Target *out, FILE *err);

#endif

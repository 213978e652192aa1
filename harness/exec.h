/* exec.h: the one execute-and-compare path. `bfsync run` and the
 * differential campaign both run a kernel this way:
 *
 *   instance_inputs (shapes from the reference, seeded default contents)
 *   -> instance_execute (bfrt_new, copy the inputs in, bfrt_run, copy the
 *      tensors out) -> instance_compare against instance_reference's
 *      results, bit for bit, and instance_compare_f64 against
 *      instance_exact's, the f64 reference, within its error bounds
 *
 * so a change to how inputs are made, copied or compared is made once.
 * The bit-for-bit comparison proves the synchronization; the f64 one the
 * arithmetic, which the sequential reference shares with the engines. */
#ifndef HARNESS_EXEC_H
#define HARNESS_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/backend.h"

/* One kernel with its parameters bound, and its tensors. */
typedef struct Instance {
  Program *p;
  const int64_t *params;
  RefTensor *inputs;   /* every tensor before a run: in and inout filled, out zero */
  RefTensor *expected; /* the reference's results; NULL until instance_reference */
  ExactTensor *exact;  /* the f64 reference's results; NULL until instance_exact */
} Instance;

/* The most bytes a run may keep for its tensors and tiles (every copy of
 * them, harness/exec.c counts): three quarters of the physical memory. */
uint64_t run_byte_limit(void);
/* Shape every tensor for the parameters and fill the in and inout ones
 * with seed's default inputs (backend/inputs.h), out ones zero. 0, or -1
 * with a message in *err (a bad shape; sizes that overflow, or tensors
 * and tiles over run_byte_limit, checked before anything is allocated). */
int instance_inputs(Instance *in, uint64_t seed, const char **err);
/* A copy of a tensor list shaped like the instance's (in its arena). */
RefTensor *instance_copy(Instance *in, const RefTensor *from);
/* The reference's results from the inputs, computed once. 0, or -1 with
 * the reference's run-time error in *err. */
int instance_reference(Instance *in, const char **err);
/* Run the compiled kernel once on a fresh copy of the inputs under opt; the
 * tensors after the run go into results (shaped by instance_copy), the
 * statistics into *stats and the wall time into *wall_ns. 0, or -1 with the
 * run's error in *err. */
int instance_execute(Instance *in, const bfrt_kernel *bk, const bfrt_options *opt, RefTensor *results,
                     bfrt_stats *stats, int64_t *wall_ns, const char **err);
/* Compare every out and inout tensor of got with the reference's bit for
 * bit (instance_reference first). Each tensor that differs gets one line on
 * report: "WHAT: tensor T differs from the reference, first at [r, c]: g,
 * expected e". Whether all match; the largest absolute difference (NaN
 * against a number is infinite) in *max_abs_err when not NULL. */
bool instance_compare(const Instance *in, const RefTensor *got, const char *what, FILE *report, double *max_abs_err);
/* The f64 reference's results from the inputs, computed once. 0, or -1
 * with its diagnostic in *err (a tile read before anything wrote it, a
 * value that is not finite from finite inputs, an out element never
 * stored, a run-time error). */
int instance_exact(Instance *in, const char **err);
/* Compare every out and inout tensor of got with the f64 reference
 * (instance_exact first): whether every element is within its error
 * bound; the largest errors in *errors, and when one is over its bound,
 * a line "WHAT: REPORT" in *report (in the program's arena), else NULL. */
bool instance_compare_f64(const Instance *in, const RefTensor *got, const char *what, ExactErrors *errors,
                          const char **report);

/* Timing only (run --exec=sim --timing-only): shape every tensor and fill
 * only the i32 ones, with the same seeded values instance_inputs gives
 * (control depends on them); the float tensors get no data (NULL). 0, or
 * -1 with a message in *err. */
int instance_inputs_timing(Instance *in, uint64_t seed, const char **err);
/* Run the compiled kernel on a bfrt_new_timing instance (opt: the
 * simulator): nothing is computed or copied out, only *stats and *wall_ns
 * are set. 0, or -1 with the run's error in *err. */
int instance_execute_timing(Instance *in, const bfrt_kernel *bk, const bfrt_options *opt, bfrt_stats *stats,
                            int64_t *wall_ns, const char **err);

#endif

/* proof_check.h: the proof's extracted validator on the code a run
 * executes (harness/proof_check.c, docs/proof.md). */
#ifndef PROOF_CHECK_H
#define PROOF_CHECK_H

#include <stdint.h>

#include "frontend/program.h"

enum {
  PROOF_UNAVAILABLE,   /* build/proof/bfcheck is not built */
  PROOF_ACCEPTED,      /* every emitted wait validated exact */
  PROOF_REJECTED,      /* the checker found a wait not exact, or an op not the model's */
  PROOF_ERROR,         /* the checker could not run, or read its input */
  PROOF_NOT_APPLICABLE, /* the barrier baseline: not exact by design */
  PROOF_SKIPPED         /* more instances than PROOF_MAX_INSTANCES, or a gather (ir_dump_outside) */
};

/* The checker is quadratic in the dynamic instances (the threshold walk
 * scans its tracked entries, the validator's vector clocks and needs are
 * indexed lists): matmul's 5,472 instances take 8 s of CPU, its 12,800
 * take 44 s. The bound keeps a verify run's check under about 30 s (10,000
 * instances, by that curve); a larger run is reported as skipped, with its
 * count, and the campaign and tests/proof.sh count the skips. */
enum { PROOF_MAX_INSTANCES = 10000 };

typedef struct ProofVerdict {
  int status;
  int64_t waits;        /* the emitted waits bfcheck evaluated, or -1 */
  char detail[512];     /* bfcheck's summary or first complaint */
} ProofVerdict;

/* Requires: p transformed (barrier-free), params bound, the device
 * integers' values bound; instances is the run's dynamic instruction
 * count. Ensures: *v is the checker's verdict on the kernel and its
 * emitted C. */
void proof_check(const Program *p, const int64_t *params, int64_t instances, ProofVerdict *v);
const char *proof_status_name(int status);

#endif

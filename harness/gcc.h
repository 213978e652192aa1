/* gcc.h: the gcc step of the differential check: the emitted C built the
 * way a user builds it (gcc -std=c99 -Wall -Wextra -Werror, linked with
 * libbfrt.a and tests/host_main.c), run as its own process on the same
 * default inputs, and its out tensors read back for comparison.
 *
 * The step works in one temporary directory per campaign,
 * $TMPDIR/bfsync-campaign-XXXXXX (TMPDIR defaults to /tmp), removed by
 * gcc_cleanup. */
#ifndef HARNESS_GCC_H
#define HARNESS_GCC_H

#include <limits.h>
#include <stdint.h>

#include "harness/exec.h"

typedef struct GccStep {
  char dir[PATH_MAX];   /* the scratch directory, "" until gcc_setup */
  const char *lib;      /* libbfrt.a */
  const char *root;     /* the source tree: runtime/ headers and tests/host_main.c */
} GccStep;

/* Make the scratch directory and build host_main.o in it. 0, or -1 after
 * a message on stderr. */
int gcc_setup(GccStep *g);
/* Remove the scratch directory and everything in it (safe to repeat). */
void gcc_cleanup(GccStep *g);
/* Build c_source, run it on in's parameters and seed's default inputs, and
 * read every out and inout tensor back into results (shaped by instance_copy). 0, or -1
 * with a message (what failed, and the log file) in msg. */
int gcc_run(const GccStep *g, Instance *in, const char *c_source, uint64_t seed, RefTensor *results, char *msg,
            size_t msg_size);

#endif

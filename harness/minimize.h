/* minimize.h: a failing kernel cut down to what still fails.
 *
 * Statements, loops and blocks are deleted from the kernel text while the
 * result still checks and still fails at the same stage of the
 * differential check (harness/check.c), each candidate judged in a forked
 * child so a crash is just a failing candidate. The result is saved as a
 * regression kernel, DIR/seed-S.bfk, in canonical form. */
#ifndef HARNESS_MINIMIZE_H
#define HARNESS_MINIMIZE_H

#include <stdint.h>

#include "harness/check.h"

/* Minimize seed's generated kernel, which failed at stage with message,
 * and write DIR/seed-S.bfk; a message on stderr either way. */
void save_regression(const Config *cfg, const char *dir, uint64_t seed, const char *stage, const char *message);

#endif

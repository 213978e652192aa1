/* random.h: the one pseudo-random generator, splitmix64 (Steele, Lea and
 * Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
 * It is small, passes BigCrush, and any 64-bit seed is a good one, which is
 * all the generated kernels, the default inputs, the oracle's schedules
 * and the jitter need. Header-only and C99, so a host program built
 * outside bfsync (tests/host_main.c, through backend/inputs.h) draws the
 * same numbers. */
#ifndef RANDOM_H
#define RANDOM_H

#include <stdint.h>

/* splitmix64 as a function: the output for state x (x advanced once). */
static inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* The next number of the stream at *state, advancing it. */
static inline uint64_t splitmix64_next(uint64_t *state) {
  uint64_t x = *state;
  *state += 0x9e3779b97f4a7c15u;
  return splitmix64(x);
}

#endif

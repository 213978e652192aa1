/* inputs.h: the default input values of `bfsync run`, as a header so that a
 * host program built outside bfsync (tests/host_main.c) can recreate
 * exactly the same tensors and compare its results bit for bit.
 *
 * Element i of tensor t under seed s is splitmix64 of (s, t, i) mapped to a
 * multiple of 2^-23 in [-1, 1): exact in f32, identical everywhere. A
 * tensor of a narrow float type (bf16, fp16, fp8e4, fp8e5) holds that value
 * rounded to nearest even in its type
 * (bfrt_round; bfrt_run rounds a host's values so, and `bfsync run` rounds
 * its defaults before either reference sees them). */
#ifndef BACKEND_INPUTS_H
#define BACKEND_INPUTS_H

#include <stdint.h>

#include "util/random.h"

/* Fill data[0 .. n) with tensor's default inputs for seed. */
static inline void bf_default_inputs(float *data, int64_t n, uint64_t seed, int tensor) {
  uint64_t base = splitmix64(seed ^ splitmix64((uint64_t)tensor + 1));
  for (int64_t i = 0; i < n; i++) {
    int64_t bits = (int64_t)(splitmix64(base + (uint64_t)i) >> 40); /* 24 random bits */
    data[i] = (float)(bits - (1 << 23)) / (float)(1 << 23);
  }
}

/* Fill the cells of an i32 tensor with its default device integers for
 * seed: values 0 .. 4 (small trip counts, both outcomes of a comparison). */
static inline void bf_default_ints(float *data, int64_t n, uint64_t seed, int tensor) {
  uint64_t base = splitmix64(seed ^ splitmix64((uint64_t)tensor + 1));
  for (int64_t i = 0; i < n; i++) {
    int32_t v = (int32_t)(splitmix64(base + (uint64_t)i) % 5);
    __builtin_memcpy(&data[i], &v, sizeof v);
  }
}

#endif

/* gen.h: random valid kernels for differential testing (`bfsync gen` and
 * the campaign). The same seed always gives the same kernel and the same parameter set, so
 * a failing seed from a campaign is a reproducible test case. */
#ifndef HARNESS_GEN_H
#define HARNESS_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GEN_DEFAULT_SIZE 40
/* At most 75 bytes an instruction (measured over seeds): 2,000,000 keep a
 * kernel file within the 256 MiB that check, run and verify read
 * (MAX_SOURCE_BYTES); 10,000,000 made files none of them would read. */
#define GEN_MAX_SIZE 2000000

/* Print the kernel for seed, with exactly size instructions, to out. Its
 * second line is `// params: ` followed by what gen_params prints, the
 * examples' convention, so a kernel file carries its own parameter set. */
void gen_kernel(uint64_t seed, long size, FILE *out);
/* gen_kernel's text, malloc'ed. */
char *gen_kernel_text(uint64_t seed, long size);
/* Print the parameter set for seed's kernel, as `NAME=V NAME=V`, to out. */
void gen_params(uint64_t seed, FILE *out);

#endif

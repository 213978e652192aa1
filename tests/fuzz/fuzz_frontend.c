/* fuzz_frontend.c: a libFuzzer harness over the frontend.
 *
 * No input may crash bfsync or make it hang, so every byte string is fed
 * to parse and check exactly as `bfsync check` would, built with ASan and
 * UBSan so that a read out of bounds or an overflow is a crash too. When
 * the input checks, it must also survive the fmt round trip: fmt's output
 * must check again and print back identically (the printer and the parser
 * agree). Any diagnostic is fine; only a crash, a leak, a hang or a broken
 * round trip is a finding. Built by `make fuzz` (see docs/correctness.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/program.h"

/* The canonical text of a checked program, malloc'ed. */
static char *formatted(const Program *p, size_t *len) {
  char *text = NULL;
  FILE *out = open_memstream(&text, len);
  fmt(p, out);
  fclose(out);
  return text;
}

/* Parse and check text; the program if it checks, else NULL. */
static Program *checked(const char *text, size_t len, FILE *diag) {
  Program *p = program_new("fuzz.bfk", text, len, target_default(), diag);
  p->diag.warn = 1; /* the warnings' analysis too (frontend/written.c) */
  parse(p);
  if (!p->diag.errors) check(p);
  if (!p->diag.errors) return p;
  program_free(p);
  return NULL;
}

static void round_trip(const Program *p, FILE *diag) {
  size_t len1, len2;
  char *once = formatted(p, &len1);
  Program *again = checked(once, len1, diag);
  if (!again) {
    fprintf(stderr, "fuzz: fmt printed a kernel that does not check:\n%s", once);
    abort();
  }
  char *twice = formatted(again, &len2);
  if (len1 != len2 || memcmp(once, twice, len1)) {
    fprintf(stderr, "fuzz: fmt is not idempotent:\n%s\n----\n%s", once, twice);
    abort();
  }
  program_free(again);
  free(once);
  free(twice);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *diag = fopen("/dev/null", "w");
  if (!diag) abort();
  Program *p = checked((const char *)data, size, diag);
  if (p) {
    round_trip(p, diag);
    program_free(p);
  }
  fclose(diag);
  return 0;
}

/* options.h: command-line pieces shared by the subcommands that run a
 * kernel (verify, run): parameter bindings and the sync mode. */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "frontend/ast.h"
#include "frontend/program.h"
#include "transform/ir.h"

#define MAX_PARAM_ARGS 64

typedef struct ParamArgs {
  int n;
  const char *names[MAX_PARAM_ARGS];
  int64_t values[MAX_PARAM_ARGS];
} ParamArgs;

/* Add "NAME=VALUE" (from -p); -1 with a message on err if malformed. */
int param_args_add(ParamArgs *pa, const char *arg, FILE *err);
/* Values in the kernel's parameter order; -1 with a message on an unknown,
 * missing or repeated parameter. */
int param_args_bind(const ParamArgs *pa, const Kernel *k, int64_t *values, FILE *err);
/* Parse the value of --sync: barrier-free | barrier | both (when allow_both).
 * Returns the number of modes written to modes[] (1 or 2), or -1. */
int parse_sync(const char *s, int allow_both, SyncMode modes[2], FILE *err);
/* The value of --name=VALUE, or of --name VALUE (advancing *i past it), at
 * argv[*i]; NULL if argv[*i] is not name, or if its value is missing (then
 * *missing is set, when missing is not NULL). */
const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing);
/* Requires: a checked program. Ensures: p->ir synchronized the way mode says. */
void transform_sync(Program *p, SyncMode mode);
/* "barrier-free" or "barrier". */
const char *sync_name(SyncMode m);

#endif

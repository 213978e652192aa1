/* params.h: kernel parameters as NAME=VALUE words, from -p options or a
 * `// params:` line, bound to a kernel's parameter order; and the check
 * every command-line number goes through (its range and message; the
 * digits are util/numbers.h's). No fixed limits: any number of
 * parameters, names of any length. */
#ifndef HARNESS_PARAMS_H
#define HARNESS_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/arena.h"
#include "frontend/ast.h"
#include "frontend/program.h"

/* Kernel parameters as given, in order. */
typedef struct ParamArgs {
  int n, cap;
  const char **names;
  int64_t *values;
} ParamArgs;

/* The one number parser: text as a decimal integer within [min, max]
 * (signed when min < 0). 0, or -1 after "WHAT needs an integer from MIN to
 * MAX, not 'TEXT'" on err. */
int parse_number(const char *what, const char *text, int64_t min, uint64_t max, uint64_t *out, FILE *err);

/* Add "NAME=VALUE"; -1 with a message on err if malformed. */
int param_args_add(ParamArgs *pa, Arena *arena, const char *arg, FILE *err);
/* Add each NAME=VALUE word of a `// params:` line (text after the colon). */
int param_args_add_line(ParamArgs *pa, Arena *arena, const char *line, FILE *err);
/* Values in the kernel's parameter order, into values (k->nparams of them);
 * -1 with a message on an unknown, missing or repeated parameter. */
int param_args_bind(const ParamArgs *pa, const Kernel *k, int64_t *values, FILE *err);
/* One parameter set of a checked kernel into params (k->nparams): given's
 * (line NULL; its errors on stderr, status 2), or a `// params:` line's
 * (program_directives), whose errors are the kernel file's, positioned at
 * the line (status 1). 0 when bound. run and verify bind this way. */
int params_bind(Program *p, const ParamArgs *given, const Directive *line, int64_t *params);
/* The parameter sets a command takes, each passed to each(p, line, ctx)
 * (line as params_bind takes it): given's when given, else the first
 * `// params:` line, or every line when all is set; a kernel without
 * parameters has one set, whatever its lines say. The worst status is kept;
 * all with parameters and no line is a usage error naming what the
 * command does (VERB: "run", "verify"), status 2. run and verify use it. */
typedef int ParamsEach(Program *p, const Directive *line, const void *ctx);
int params_each(Program *p, const ParamArgs *given, bool all, const char *verb, ParamsEach *each, const void *ctx);

#endif

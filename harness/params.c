/* params.c: parameter bindings and the command line's numbers (see
 * params.h), shared by the commands and the campaign so both report the
 * same errors the same way. The digits themselves go through the one
 * integer parser, util/numbers.c. */
#include "harness/params.h"
#include "util/numbers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int parse_number(const char *what, const char *text, int64_t min, uint64_t max, uint64_t *out, FILE *err) {
  bool ok = !parse_integer(text, min, max, out);
  if (ok) return 0;
  error_print(err, "%s needs an integer from %" PRId64 " to %" PRIu64 ", not '%s'\n", what, min, max,
          text);
  return -1;
}

int param_args_add(ParamArgs *pa, Arena *arena, const char *arg, FILE *err) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    error_print(err, "parameter '%s' is not NAME=VALUE\n", arg);
    return -1;
  }
  const char *name = arena_strndup(arena, arg, (size_t)(eq - arg));
  uint64_t value;
  if (parse_number(arena_printf(arena, "parameter %s", name), eq + 1, INT64_MIN, INT64_MAX, &value, err))
    return -1;
  int cap = pa->cap;
  pa->names = arena_grow(arena, pa->names, sizeof *pa->names, pa->n, &cap);
  pa->values = arena_grow(arena, pa->values, sizeof *pa->values, pa->n, &pa->cap);
  pa->names[pa->n] = name;
  pa->values[pa->n++] = (int64_t)value;
  return 0;
}

int param_args_add_line(ParamArgs *pa, Arena *arena, const char *line, FILE *err) {
  char *copy = arena_strndup(arena, line, strcspn(line, "\n"));
  for (char *save, *tok = strtok_r(copy, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save))
    if (param_args_add(pa, arena, tok, err)) return -1;
  return 0;
}

static int find_param(const Kernel *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, name)) return i;
  return -1;
}

int param_args_bind(const ParamArgs *pa, const Kernel *k, int64_t *values, FILE *err) {
  bool *given = calloc((size_t)k->nparams + 1, sizeof *given);
  if (!given) bug("out of memory");
  int status = 0;
  for (int i = 0; i < pa->n; i++) {
    int p = find_param(k, pa->names[i]);
    if (p < 0) {
      error_print(err, "kernel '%s' has no parameter '%s'\n", k->name, pa->names[i]);
      status = -1;
    } else if (given[p]) {
      error_print(err, "parameter '%s' given twice\n", pa->names[i]);
      status = -1;
    } else {
      given[p] = true;
      values[p] = pa->values[i];
    }
  }
  for (int p = 0; p < k->nparams; p++)
    if (!given[p]) {
      error_print(err, "missing parameter '%s' (give -p %s=VALUE)\n", k->params[p].name,
              k->params[p].name);
      status = -1;
    }
  free(given);
  return status;
}

int params_bind(Program *p, const ParamArgs *given, const Directive *line, int64_t *params) {
  if (!line) return param_args_bind(given, p->kernel, params, stderr) ? 2 : 0;
  char *why = NULL;
  size_t len = 0;
  FILE *err = open_memstream(&why, &len);
  if (!err) bug("out of memory");
  ParamArgs pa = {0};
  const char *text = arena_strndup(p->arena, p->src.text + line->value.begin, line->value.end - line->value.begin);
  int failed = param_args_add_line(&pa, p->arena, text, err) || param_args_bind(&pa, p->kernel, params, err);
  fclose(err);
  /* one diagnostic per message, without the ERROR_PREFIX each begins with */
  for (char *save, *msg = strtok_r(why, "\n", &save); failed && msg; msg = strtok_r(NULL, "\n", &save))
    diag_error(&p->diag, line->value, "in this `// params:` line: %s",
               strncmp(msg, ERROR_PREFIX, strlen(ERROR_PREFIX)) ? msg : msg + strlen(ERROR_PREFIX));
  free(why);
  return failed ? 1 : 0;
}

int params_each(Program *p, const ParamArgs *given, bool all, const char *verb, ParamsEach *each, const void *ctx) {
  Directive *lines = NULL;
  int nlines = given->n || !p->kernel->nparams ? 0 : program_directives(p, "params", &lines);
  if (all && !nlines && p->kernel->nparams) {
    error_print(stderr, "--all-params: %s has no `// params:` line to %s\n", p->src.path, verb);
    return 2;
  }
  if (!nlines) return each(p, NULL, ctx);
  int status = 0;
  for (int i = 0; i < (all ? nlines : 1); i++) {
    int s = each(p, &lines[i], ctx);
    if (s > status) status = s;
  }
  return status;
}

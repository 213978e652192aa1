/* options.c: parameter bindings (-p NAME=VALUE) and --sync values, shared
 * by verify and run so both report the same errors the same way. */
#include "driver/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int param_args_add(ParamArgs *pa, const char *arg, FILE *err) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    fprintf(err, "bfsync: error: parameter '%s' is not NAME=VALUE\n", arg);
    return -1;
  }
  if (pa->n == MAX_PARAM_ARGS) {
    fprintf(err, "bfsync: error: more than %d parameters\n", MAX_PARAM_ARGS);
    return -1;
  }
  char *end;
  errno = 0;
  long long v = strtoll(eq + 1, &end, 10);
  if (errno || *end) {
    fprintf(err, "bfsync: error: parameter value '%s' is not a 64-bit integer\n", eq + 1);
    return -1;
  }
  static char names[MAX_PARAM_ARGS][64];
  size_t len = (size_t)(eq - arg);
  if (len >= sizeof names[0]) len = sizeof names[0] - 1;
  memcpy(names[pa->n], arg, len);
  names[pa->n][len] = 0;
  pa->names[pa->n] = names[pa->n];
  pa->values[pa->n++] = v;
  return 0;
}

static int find_param(const Kernel *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, name)) return i;
  return -1;
}

int param_args_bind(const ParamArgs *pa, const Kernel *k, int64_t *values, FILE *err) {
  int given[MAX_PARAM_ARGS] = {0};
  int status = 0;
  for (int i = 0; i < pa->n; i++) {
    int p = find_param(k, pa->names[i]);
    if (p < 0) {
      fprintf(err, "bfsync: error: kernel '%s' has no parameter '%s'\n", k->name, pa->names[i]);
      status = -1;
    } else if (given[p]++) {
      fprintf(err, "bfsync: error: parameter '%s' given twice\n", pa->names[i]);
      status = -1;
    } else {
      values[p] = pa->values[i];
    }
  }
  for (int p = 0; p < k->nparams && p < MAX_PARAM_ARGS; p++)
    if (!given[p]) {
      fprintf(err, "bfsync: error: missing parameter '%s' (give -p %s=VALUE)\n", k->params[p].name,
              k->params[p].name);
      status = -1;
    }
  return status;
}

int parse_sync(const char *s, int allow_both, SyncMode modes[2], FILE *err) {
  if (!strcmp(s, "barrier-free")) {
    modes[0] = SYNC_BARRIER_FREE;
    return 1;
  }
  if (!strcmp(s, "barrier")) {
    modes[0] = SYNC_BARRIER;
    return 1;
  }
  if (allow_both && !strcmp(s, "both")) {
    modes[0] = SYNC_BARRIER;
    modes[1] = SYNC_BARRIER_FREE;
    return 2;
  }
  fprintf(err, "bfsync: error: --sync must be barrier-free, barrier%s (not '%s')\n",
          allow_both ? " or both" : "", s);
  return -1;
}

const char *sync_name(SyncMode m) { return m == SYNC_BARRIER ? "barrier" : "barrier-free"; }

const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n]) return NULL;
  if (*i + 1 >= argc) {
    if (missing) *missing = true;
    return NULL;
  }
  return argv[++*i];
}

void transform_sync(Program *p, SyncMode mode) {
  if (mode == SYNC_BARRIER)
    transform_barrier(p);
  else
    transform_barrier_free(p);
}

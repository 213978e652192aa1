/* args.c: the one command-line parser (see args.h).
 *
 * Every subcommand used to read its own options; now each is a table and
 * this file is the only code that looks at argv. Lists (parameters, named
 * paths) grow in the command line's arena, so there is no fixed limit on
 * how many a command takes or how long a name is. */
#include "driver/args.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "transform/ir.h"

int args_error(const CommandLine *cl, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_vprint(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see bfsync %s --help)\n", cl->command);
  return 2;
}

static int add_named_path(const CommandLine *cl, const ArgSpec *s, const char *v) {
  NamedPaths *list = s->dest;
  const char *eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1]) return args_error(cl, "%s takes NAME=FILE.npy, not '%s'", s->name, v);
  list->items = arena_grow(cl->arena, list->items, sizeof *list->items, list->n, &list->cap);
  list->items[list->n++] = (NamedPath){arena_strndup(cl->arena, v, (size_t)(eq - v)), eq + 1};
  return 0;
}

static int set_mutation(const CommandLine *cl, const ArgSpec *s, const char *v) {
  static const struct {
    const char *prefix;
    IrMutation kind;
  } kinds[] = {{"drop:", DROP_WAIT}, {"lower:", LOWER_THRESHOLD}, {"raise:", RAISE_THRESHOLD}};
  Mutation *m = s->dest;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t n = strlen(kinds[k].prefix);
    uint64_t index;
    if (strncmp(v, kinds[k].prefix, n)) continue;
    FILE *quiet = fopen("/dev/null", "w");
    int bad = parse_number("--mutate", v + n, 0, INT32_MAX, &index, quiet ? quiet : stderr);
    if (quiet) fclose(quiet);
    if (bad) break;
    *m = (Mutation){(int)kinds[k].kind, (int)index};
    return 0;
  }
  return args_error(cl, "--mutate must be drop:K, lower:K or raise:K (not '%s')", v);
}

/* ---- The parser. */

/* "a, b or c". */
static const char *choice_list(Arena *arena, const char *const *choices) {
  const char *list = "";
  for (int c = 0; choices[c]; c++)
    list = arena_printf(arena, "%s%s%s", list, c == 0 ? "" : choices[c + 1] ? ", " : " or ", choices[c]);
  return list;
}

static int take_value(const CommandLine *cl, const ArgSpec *s, const char *v) {
  uint64_t n;
  switch (s->kind) {
  case ARG_FLAG: *(bool *)s->dest = true; return 0;
  case ARG_STRING:
    if (!*v) return args_error(cl, "%s needs a value", s->name);
    *(const char **)s->dest = v;
    return 0;
  case ARG_NUMBER:
    if (parse_number(s->name, v, (int64_t)s->min, s->max, &n, stderr)) return 2;
    *(uint64_t *)s->dest = n;
    return 0;
  case ARG_CHOICE:
    for (int c = 0; s->choices[c]; c++)
      if (!strcmp(v, s->choices[c])) {
        *(int *)s->dest = c;
        return 0;
      }
    return args_error(cl, "%s must be %s (not '%s')", s->name, choice_list(cl->arena, s->choices), v);
  case ARG_PARAM: return param_args_add(s->dest, cl->arena, v, stderr) ? 2 : 0;
  case ARG_NAMED_PATH: return add_named_path(cl, s, v);
  case ARG_MUTATION: return set_mutation(cl, s, v);
  }
  bug("args: option kind %d", s->kind);
}

/* The spec argv[*i] names, its value in *value (advancing *i past a
 * separate value); NULL if none matches. */
static const ArgSpec *match(const CommandLine *cl, int argc, char **argv, int *i, const char **value,
                            bool *missing) {
  const char *arg = argv[*i];
  for (const ArgSpec *s = cl->specs; s->name; s++) {
    size_t n = strlen(s->name);
    if (strncmp(arg, s->name, n)) continue;
    bool is_short = s->name[1] != '-';
    if (s->kind == ARG_FLAG) {
      if (arg[n]) continue;
      return s;
    }
    if (arg[n] == '=' && !is_short) *value = arg + n + 1;
    else if (arg[n] && is_short) *value = arg + n;
    else if (arg[n]) continue;
    else if (*i + 1 < argc) *value = argv[++*i];
    else *missing = true;
    return s;
  }
  return NULL;
}

int args_parse(CommandLine *cl, int argc, char **argv) {
  cl->files = ARENA_ARRAY(cl->arena, const char *, argc + 1);
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(cl->usage, stdout);
      return 0;
    }
  bool only_files = false;
  int nspecs = 0;
  while (cl->specs[nspecs].name) nspecs++;
  bool *seen = ARENA_ARRAY(cl->arena, bool, nspecs + 1);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    bool missing = false;
    if (only_files || arg[0] != '-' || !arg[1]) {
      if (cl->nfiles == cl->max_files)
        return args_error(cl, "%s takes %s FILE (also got '%s')", cl->command,
                          cl->max_files == 0 ? "no" : cl->max_files == 1 ? "one" : "fewer", arg);
      cl->files[cl->nfiles++] = arg;
      continue;
    }
    if (!strcmp(arg, "--")) {
      only_files = true;
      continue;
    }
    const ArgSpec *s = match(cl, argc, argv, &i, &value, &missing);
    if (!s) return args_error(cl, "unknown or incomplete option '%s'", arg);
    if (missing) return args_error(cl, "%s needs a value", arg);
    /* one value each: a second would silently replace the first */
    if (seen[s - cl->specs] && s->kind != ARG_FLAG && s->kind != ARG_PARAM && s->kind != ARG_NAMED_PATH)
      return args_error(cl, "%s given twice", s->name);
    seen[s - cl->specs] = true;
    if (s->given) *s->given = true;
    int status = take_value(cl, s, value);
    if (status) return status;
  }
  for (int s = 0; s < nspecs; s++)
    if (cl->specs[s].required && !seen[s]) return args_error(cl, "%s is required", cl->specs[s].name);
  if (cl->nfiles < cl->min_files) return args_error(cl, "no input file");
  return -1;
}

int output_finish(AtomicFile *out, int status) {
  if (status) {
    atomic_abort(out);
    return 1;
  }
  if (atomic_commit(out)) {
    error_print(stderr, "%s\n", out->error);
    return 1;
  }
  return 0;
}

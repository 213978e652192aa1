/* cmd_fmt.c: `bfsync fmt FILE`: print the kernel in canonical form on
 * stdout; with -i, rewrite the files in place; with --check, only say
 * which files are not canonical (exit 1), as a CI check does. Only a
 * kernel that checks cleanly is printed or rewritten, so fmt never turns a
 * broken file into a different broken file. Comments are kept.
 *
 *   fmt      parse -> check -> fmt -> stdout | the file (atomically) | compare */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "driver/diagnostics.h"
#include "util/files.h"
#include "frontend/program.h"

static const char usage_text[] =
    "usage: bfsync fmt [-i | --check] [--target FILE] FILE...\n\n"
    "Print the kernel (- reads standard input) in canonical form on stdout:\n"
    "one statement per line, two-space indentation, minimal parentheses.\n"
    "Comments and blank lines are kept where they were; trailing comments\n"
    "keep their column when there is room.\n"
    "  -i             rewrite each FILE in place (only when it differs)\n"
    "  --check        print nothing but the files not in canonical form; exit 1 if any\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n"
    DIAGNOSTICS_FORMAT_HELP
    "Exit status: 0 printed (or all canonical), 1 errors in a kernel (or a file\n"
    "not canonical with --check), 2 usage error.\n";

typedef struct FmtArgs {
  bool in_place, check;
  const Target *target;
  DiagOutput *dout;
} FmtArgs;

/* The canonical text of p, malloc'ed, *len bytes. */
static char *canonical(const Program *p, size_t *len) {
  char *text = NULL;
  FILE *mem = open_memstream(&text, len);
  if (!mem) bug("fmt: cannot open a memory stream");
  fmt(p, mem);
  fclose(mem);
  return text;
}

static int rewrite(const char *path, const char *text, size_t len) {
  AtomicFile af;
  if (atomic_open(&af, path) || (fwrite(text, 1, len, af.f), atomic_commit(&af))) {
    error_print(stderr, "cannot rewrite %s: %s\n", path, af.error);
    return 1;
  }
  return 0;
}

/* 0, or 1 (a kernel error, a file to rewrite under --check, an I/O error). */
static int fmt_file(const char *path, const FmtArgs *a) {
  Program *p = program_load(path, a->target, stderr);
  if (!p) return 1;
  diag_output_attach(a->dout, p);
  if (!a->target && program_use_target_line(p, stderr)) {
    program_free(p);
    return 1;
  }
  parse(p);
  if (!p->diag.errors) check(p);
  int status = p->diag.errors ? 1 : 0;
  if (!status) {
    size_t len;
    char *text = canonical(p, &len);
    bool same = len == p->src.len && !memcmp(text, p->src.text, len);
    if (a->check && !same) {
      fprintf(stderr, "%s: not in canonical form (bfsync fmt -i rewrites it)\n", path);
      status = 1;
    } else if (a->in_place && !same) {
      status = rewrite(path, text, len);
    } else if (!a->check && !a->in_place) {
      fwrite(text, 1, len, stdout);
    }
    free(text);
  }
  program_free(p);
  return status;
}

int cmd_fmt(int argc, char **argv) {
  DiagOutput dout = {0};
  FmtArgs a = {.dout = &dout};
  const char *target_path = NULL;
  const ArgSpec specs[] = {
      {.name = "-i", .kind = ARG_FLAG, .dest = &a.in_place},
      {.name = "--check", .kind = ARG_FLAG, .dest = &a.check},
      {.name = "--target", .kind = ARG_STRING, .dest = &target_path},
      ARG_DIAGNOSTICS_FORMAT(&dout.format),
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"fmt", usage_text, specs, 1, INT_MAX, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  if (status < 0 && a.in_place && a.check) status = args_error(&cl, "-i and --check do not go together");
  if (status < 0 && !a.in_place && !a.check && cl.nfiles > 1)
    status = args_error(&cl, "fmt prints one FILE; give -i or --check for several");
  for (int i = 0; status < 0 && a.in_place && i < cl.nfiles; i++)
    if (!strcmp(cl.files[i], "-")) status = args_error(&cl, "-i cannot rewrite standard input");
  if (status < 0) diag_output_begin(&dout);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    a.target = target_path ? target : NULL;
    status = 0;
    for (int i = 0; i < cl.nfiles; i++) status |= fmt_file(cl.files[i], &a);
  }
  status = diag_output_end(&dout, status);
  arena_free(arena);
  return status;
}

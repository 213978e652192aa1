/* cmd_check.c: `bfsync check FILE...`, the frontend alone: parse and
 * analyze each file, report every error, print nothing on success. Exit 0
 * when every file is clean, 1 when any has errors, 2 on a usage error.
 *
 *   check    parse -> check */
#include <limits.h>
#include <stdio.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "driver/diagnostics.h"
#include "frontend/program.h"

static const char usage_text[] =
    "usage: bfsync check [--target FILE] FILE...\n\n"
    "Parse and analyze each kernel file (- reads standard input). Prints\n"
    "nothing on success; each error as FILE:LINE:COL: error: MESSAGE, then\n"
    "the source line and a caret under the place.\n"
    "  --target FILE  the machine's engines and limits (default: the built-in trn1)\n"
    DIAGNOSTICS_FORMAT_HELP
    "Exit status: 0 all files clean, 1 errors found, 2 usage error.\n";

/* 0 when path is a clean kernel, 1 otherwise. */
static int check_file(const char *path, const Target *target, DiagOutput *dout) {
  Program *p = program_load(path, target, stderr);
  if (!p) return 1;
  diag_output_attach(dout, p);
  if (!target && program_use_target_line(p, stderr)) {
    program_free(p);
    return 1;
  }
  parse(p);
  if (!p->diag.errors) check(p);
  int status = p->diag.errors ? 1 : 0;
  program_free(p);
  return status;
}

int cmd_check(int argc, char **argv) {
  const char *target_path = NULL;
  DiagOutput dout = {0};
  const ArgSpec specs[] = {{.name = "--target", .kind = ARG_STRING, .dest = &target_path},
                           ARG_DIAGNOSTICS_FORMAT(&dout.format), {0}};
  Arena *arena = arena_new();
  CommandLine cl = {"check", usage_text, specs, 1, INT_MAX, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  if (status < 0) diag_output_begin(&dout);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    status = 0;
    for (int i = 0; i < cl.nfiles; i++) status |= check_file(cl.files[i], target_path ? target : NULL, &dout);
  }
  status = diag_output_end(&dout, status);
  arena_free(arena);
  return status;
}

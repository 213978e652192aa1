/* cmd_fmt.c: `bfsync fmt FILE`: print the kernel in canonical form on
 * stdout. Only a kernel that checks cleanly is printed, so fmt never turns
 * a broken file into a different broken file. Comments are kept.
 *
 *   fmt      parse -> check -> fmt */
#include <stdio.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "frontend/program.h"

static const char usage_text[] =
    "usage: bfsync fmt FILE\n\n"
    "Print the kernel (- reads standard input) in canonical form on stdout:\n"
    "one statement per line, two-space indentation, minimal parentheses.\n"
    "Comments and blank lines are kept where they were.\n"
    "Exit status: 0 printed, 1 errors in the kernel, 2 usage error.\n";

int cmd_fmt(int argc, char **argv) {
  static const ArgSpec specs[] = {{0}};
  Arena *arena = arena_new();
  CommandLine cl = {"fmt", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  Program *p = status < 0 ? program_load(cl.files[0], NULL, stderr) : NULL;
  if (p) {
    parse(p);
    if (!p->diag.errors) check(p);
    if (!p->diag.errors) fmt(p, stdout);
    status = p->diag.errors ? 1 : 0;
  } else if (status < 0) {
    status = 1;
  }
  program_free(p);
  arena_free(arena);
  return status;
}

/* cmd_fmt.c: `bfsync fmt FILE`: print the kernel in canonical form on
 * stdout. Only a kernel that checks cleanly is printed, so fmt never turns
 * a broken file into a different broken file. Comments are kept.
 *
 *   fmt      parse -> check -> fmt */
#include <stdio.h>
#include <string.h>

#include "driver/commands.h"
#include "frontend/program.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: bfsync fmt FILE\n\n"
          "Print the kernel (- reads standard input) in canonical form on stdout:\n"
          "one statement per line, two-space indentation, minimal parentheses.\n"
          "Comments and blank lines are kept where they were.\n"
          "Exit status: 0 printed, 1 errors in the kernel, 2 usage error.\n");
}

int cmd_fmt(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    usage(stdout);
    return 0;
  }
  if (argc != 2 || (argv[1][0] == '-' && argv[1][1])) {
    usage(stderr);
    return 2;
  }
  Program *p = program_load(argv[1], NULL, stderr);
  if (!p) return 1;
  parse(p);
  if (!p->diag.errors) check(p);
  if (!p->diag.errors) fmt(p, stdout);
  int status = p->diag.errors ? 1 : 0;
  program_free(p);
  return status;
}

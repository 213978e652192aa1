/* cmd_check.c: `bfsync check FILE...`, the frontend alone: parse and
 * analyze each file, report every error, print nothing on success. Exit 0
 * when every file is clean, 1 when any has errors, 2 on a usage error.
 *
 *   check    parse -> check */
#include <stdio.h>
#include <string.h>

#include "driver/commands.h"
#include "frontend/program.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: bfsync check FILE...\n\n"
          "Parse and analyze each kernel file (- reads standard input). Prints\n"
          "nothing on success; each error as FILE:LINE:COL: error: MESSAGE, then\n"
          "the source line and a caret under the place.\n"
          "Exit status: 0 all files clean, 1 errors found, 2 usage error.\n");
}

/* 0 when path is a clean kernel, 1 otherwise. */
static int check_file(const char *path) {
  Program *p = program_load(path, NULL, stderr);
  if (!p) return 1;
  parse(p);
  if (!p->diag.errors) check(p);
  int status = p->diag.errors ? 1 : 0;
  program_free(p);
  return status;
}

int cmd_check(int argc, char **argv) {
  int first = 1;
  for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
    if (!strcmp(argv[first], "--")) {
      first++;
      break;
    }
    if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
      usage(stdout);
      return 0;
    }
    fprintf(stderr, "bfsync check: unknown option '%s'\n", argv[first]);
    usage(stderr);
    return 2;
  }
  if (first >= argc) {
    usage(stderr);
    return 2;
  }
  int status = 0;
  for (int i = first; i < argc; i++) status |= check_file(argv[i]);
  return status;
}

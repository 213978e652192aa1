/* main.c: the bfsync command. It only dispatches; each subcommand writes
 * its pipeline out in its own file (driver/cmd_*.c):
 *
 *   check    parse -> check
 *   fmt      parse -> check -> fmt
 *   compile  parse -> check -> transform -> ir_validate -> emit_c | ir_print
 *   verify   parse -> check -> transform -> ir_validate -> oracle
 *   run      parse -> check -> transform -> ir_validate -> emit_c -> jit -> run,
 *            compared bit for bit with the reference and within bounds with
 *            the f64 reference (harness/exec.c)
 *   gen      random valid kernels for differential testing
 *   ops      the op table, with the target's engines
 *   timeline a trace drawn as an SVG
 *   lsp      a language server: diagnostics, hover, definition, the waits as inlay hints */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "driver/commands.h"

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} commands[] = {
    {"check", cmd_check, "parse and analyze kernels; silent on success"},
    {"fmt", cmd_fmt, "print a kernel in canonical form"},
    {"compile", cmd_compile, "emit C (or the IR) with synchronization inserted"},
    {"verify", cmd_verify, "check the synchronization against the exactness oracle"},
    {"run", cmd_run, "JIT-compile and run a kernel, compared with the reference"},
    {"gen", cmd_gen, "print a random valid kernel"},
    {"campaign", cmd_campaign, "differential campaign over random kernels; exhaustive small scope"},
    {"ops", cmd_ops, "list every op with its engines and shape rule"},
    {"timeline", cmd_timeline, "draw a trace of `run --trace` as an SVG timeline"},
    {"lsp", cmd_lsp, "a language server for editors, on standard input and output"},
};

/* The command's status, or 1 after a message when its output could not
 * be written (a full disk, a closed pipe): a lost output is never silent. */
static int stdout_written(int status) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return status;
  error_print(stderr, "cannot write the output: %s\n", strerror(errno));
  return status ? status : 1;
}

static void usage(FILE *out) {
  fprintf(out, "usage: bfsync COMMAND [options] FILE...\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\n`bfsync COMMAND --help` describes each command. Docs: docs/.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("bfsync %s\n", BFSYNC_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return stdout_written(commands[i].run(argc - 1, argv + 1));
  fprintf(stderr, "bfsync: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}

/* args.h: the one command-line parser every subcommand uses.
 *
 * A command describes its options in a table of ArgSpec (name, kind, where
 * the value goes) and calls args_parse; the parser does the rest the same
 * way for every command: `--name VALUE` and `--name=VALUE`, `-p VALUE` and
 * `-pVALUE`, --help, files, and one message format for every usage error
 * (exit status 2). Numbers go through one number parser with one range
 * error, parameters (-p NAME=VALUE) and named paths (--input NAME=PATH)
 * through one list type each, with no fixed limits. */
#ifndef ARGS_H
#define ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/arena.h"
#include "util/files.h"
#include "harness/params.h"
#include "transform/ir.h"

typedef enum ArgKind {
  ARG_FLAG,       /* bool: present or not */
  ARG_STRING,     /* const char *: a non-empty value */
  ARG_NUMBER,     /* uint64_t within [min, max] */
  ARG_CHOICE,     /* int: the index of the value in choices (NULL-terminated) */
  ARG_PARAM,      /* ParamArgs: NAME=VALUE, repeatable */
  ARG_NAMED_PATH, /* NamedPaths: NAME=PATH, repeatable */
  ARG_MUTATION,   /* Mutation: drop:K | lower:K | raise:K */
} ArgKind;

typedef struct ArgSpec {
  const char *name;  /* "--seed", or a short "-p" (takes -pVALUE too) */
  ArgKind kind;
  void *dest;
  uint64_t min, max;          /* ARG_NUMBER */
  const char *const *choices; /* ARG_CHOICE */
  bool required;              /* a usage error when absent */
  bool *given;                /* if set: made true when the option appears */
} ArgSpec;

/* NAME=PATH pairs (--input, --output), in order. */
typedef struct NamedPath {
  const char *name, *path;
} NamedPath;
typedef struct NamedPaths {
  int n, cap;
  NamedPath *items;
} NamedPaths;

/* TEST ONLY: which wait of the synchronization to break (transform/mutate.c). */
typedef struct Mutation {
  int kind;  /* IrMutation */
  int index; /* < 0: none */
} Mutation;

typedef struct CommandLine {
  const char *command;   /* "run": messages say "see bfsync run --help" */
  const char *usage;     /* printed by --help */
  const ArgSpec *specs;  /* ended by an entry with name NULL */
  int min_files, max_files;
  Arena *arena;          /* every string and list the parse keeps */
  const char **files;    /* the operands that are not options, in order */
  int nfiles;
} CommandLine;

/* Parse argv (argv[0] is the command). Returns -1 to go on, 0 after
 * printing --help, 2 after a usage error message on stderr. */
int args_parse(CommandLine *cl, int argc, char **argv);
/* A usage error: "bfsync: error: MESSAGE (see bfsync CMD --help)"; returns 2. */
int args_error(const CommandLine *cl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* End an output a command opened with atomic_open: abort it when the
 * command failed (status non-zero), else commit it, saying why on stderr
 * if that fails. Returns 0 when the file is in place, else 1. */
int output_finish(AtomicFile *out, int status);

#endif

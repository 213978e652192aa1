/* commands.h: the bfsync subcommands. Each takes argv after the command
 * name (argv[0] is the command) and returns the exit status:
 * 0 success, 1 user error or mismatch, 2 usage error. */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stdio.h>

int cmd_check(int argc, char **argv);   /* driver/cmd_check.c */
int cmd_fmt(int argc, char **argv);     /* driver/cmd_fmt.c */
int cmd_compile(int argc, char **argv); /* driver/cmd_compile.c */
int cmd_verify(int argc, char **argv);  /* driver/cmd_verify.c */
int cmd_run(int argc, char **argv);     /* driver/cmd_run.c */
int cmd_gen(int argc, char **argv);     /* driver/cmd_gen.c */
int cmd_campaign(int argc, char **argv); /* driver/cmd_campaign.c */
int cmd_ops(int argc, char **argv);     /* driver/cmd_ops.c */
int cmd_timeline(int argc, char **argv); /* driver/cmd_timeline.c */

int cmd_lsp(int argc, char **argv);     /* driver/cmd_lsp.c */

/* The op's entry of the op table as Markdown: operands, shape rule, the
 * target's engines that run it, its cost class with the target's figures,
 * its accuracy class (the language server's hover). driver/cmd_ops.c */
struct Target;
void ops_describe(const struct Target *t, int op, FILE *out);

/* Bind p's i32 tensors (p->device_ints) for params: `bfsync run`'s
 * defaults for seed, replaced by each --input NAME=X.npy of inputs. Float
 * tensors get no storage unless whole, the start of the message when they
 * do not fit as a run's must. 0, or the exit status after a message (2
 * for an --input that names no i32 tensor). driver/device_inputs.c */
#include <stdint.h>
struct Program;
struct NamedPaths;
int device_inputs_bind(struct Program *p, const int64_t *params, const struct NamedPaths *inputs, uint64_t seed,
                       const char *command, const char *whole);

#endif

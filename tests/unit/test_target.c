/* test_target.c: target files (target/target_file.c) and the built-in
 * default.
 *
 * The built-in trn1 is exactly targets/trn1.target; a small file with
 * comments, tabs, CRLF line ends and two DMA queues reads as written and
 * a kernel can use both queues; each kind of malformed file is rejected
 * with its message at its line and column (tests/bad_targets has the
 * command-line versions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/ops.h"
#include "frontend/program.h"
#include "target/target.h"
#include "runtime/bfrt_cost.h"

/* Parse text; the diagnostics in *messages (static buffer). */
static int parse_text(const char *text, Arena *arena, Target *t, const char **messages) {
  static char buf[8192];
  FILE *err = fmemopen(buf, sizeof buf, "w");
  assert_non_null(err);
  int status = target_parse("t.target", text, strlen(text), arena, t, err);
  fclose(err);
  *messages = buf;
  return status;
}

static void test_builtin_is_the_file(void **state) {
  (void)state;
  Arena *arena = arena_new();
  Target file;
  assert_int_equal(target_load("targets/trn1.target", arena, &file, stderr), 0);
  const Target *builtin = target_default();
  assert_string_equal(builtin->name, "trn1");
  assert_string_equal(file.name, builtin->name);
  assert_int_equal(file.nengines, 20);
  assert_int_equal(builtin->nengines, 20);
  static const char *const names[] = {"pe", "act", "dve", "pool"};
  for (int e = 0; e < 20; e++) {
    char queue[8];
    snprintf(queue, sizeof queue, "dma%d", e - 4);
    assert_string_equal(builtin->engines[e].name, e < 4 ? names[e] : queue); /* 16 DMA queues [dma] */
    assert_string_equal(file.engines[e].name, builtin->engines[e].name);
    assert_int_equal(builtin->engines[e].kind, e < 4 ? e : BFRT_KIND_DMA); /* BFRT_KIND_PE .. BFRT_KIND_DMA */
    assert_int_equal(file.engines[e].kind, builtin->engines[e].kind);
  }
  assert_memory_equal(&file.costs, &builtin->costs, sizeof file.costs);
  /* a few of the published figures, as the file converts them */
  assert_true(builtin->costs.clock_ghz == 1.4);
  assert_int_equal(builtin->costs.kind[BFRT_KIND_PE].pe_rows, 128);
  assert_int_equal(builtin->costs.kind[BFRT_KIND_PE].matmul_min_cols, 64);
  assert_int_equal(builtin->costs.kind[BFRT_KIND_DVE].lanes, 128);
  assert_true(builtin->costs.kind[BFRT_KIND_DVE].two_input_factor == 2);
  assert_true(builtin->costs.kind[BFRT_KIND_DMA].dma_bytes_per_cycle == 13.26);
  assert_int_equal(builtin->costs.kind[BFRT_KIND_DMA].dma_row_bytes, 512); /* per contiguous run [dma-bw] */
  assert_int_equal(builtin->costs.kind[BFRT_KIND_DMA].dma_outstanding, 16); /* pipelined queues by default */
  assert_int_equal(builtin->costs.kind[BFRT_KIND_DMA].dma_split, 16);       /* 16 DMA engines per transfer [dma] */
  /* the hardware limits: 128 partitions, 192 KiB SBUF and 16 KiB PSUM (8 banks) per partition */
  assert_memory_equal(&file.limits, &builtin->limits, sizeof file.limits);
  assert_int_equal(builtin->limits.partitions, 128);
  assert_int_equal(builtin->limits.sbuf_bytes_per_partition, 192 * 1024);
  assert_int_equal(builtin->limits.psum_bytes_per_partition, 16 * 1024);
  assert_int_equal(builtin->limits.psum_banks, 8);
  assert_int_equal(builtin->limits.psum_kinds, BFK_PE | BFK_ACT | BFK_DVE);
  assert_int_equal(builtin->limits.matmul_psum_f32, 1); /* nc_matmul writes f32 PSUM */
  assert_int_equal(builtin->limits.matmul_sbuf_inputs, 1); /* and reads SBUF */
  arena_free(arena);
}

static const char two_queues[] =
    "# two DMA queues\r\n"
    "name = q2   # comment\r\n"
    "\tclock_ghz\t=\t2.5\r\n"
    "\r\n"
    "[engines]\r\n"
    "act = act\r\n"
    "dma0 = dma\r\n"
    "dma1 = dma\r\n"
    "[ kind  dma ]\r\n"
    "dma_latency = 7\r\n"
    "dma_bytes_per_cycle = .5\r\n"
    "dma_outstanding = 4\r\n"
    "[kind act]\r\n"
    "elems_per_cycle.transcendental = 1e1\r\n"
    "overhead = 3";

/* A target without [limits] sets none. */
static void test_two_queues(void **state) {
  (void)state;
  Arena *arena = arena_new();
  Target t;
  const char *messages;
  assert_int_equal(parse_text(two_queues, arena, &t, &messages), 0);
  assert_string_equal(messages, "");
  assert_string_equal(t.name, "q2");
  assert_true(t.costs.clock_ghz == 2.5);
  assert_int_equal(t.nengines, 3);
  assert_int_equal(t.limits.partitions, 0);
  assert_int_equal(t.limits.psum_kinds, 0);
  assert_int_equal(t.limits.matmul_psum_f32, 0);
  assert_int_equal(target_engine(&t, "dma1"), 2);
  assert_int_equal(t.engines[2].kind, BFRT_KIND_DMA);
  assert_true(target_can_run(&t, 2, BFRT_LOAD));
  assert_false(target_can_run(&t, 2, BFRT_EXP));
  assert_true(target_can_run(&t, 0, BFRT_EXP));
  assert_int_equal(t.costs.kind[BFRT_KIND_DMA].dma_latency, 7);
  assert_true(t.costs.kind[BFRT_KIND_DMA].dma_bytes_per_cycle == 0.5);
  assert_int_equal(t.costs.kind[BFRT_KIND_DMA].dma_outstanding, 4);
  assert_int_equal(bfrt_op_window(&t.costs, BFRT_KIND_DMA), 4);
  assert_true(t.costs.kind[BFRT_KIND_ACT].elems_per_cycle[BFRT_CLASS_TRANSCENDENTAL] == 10);
  assert_int_equal(t.costs.kind[BFRT_KIND_ACT].overhead, 3);
  /* a kernel written for it uses both queues; pe is not an engine here */
  static const char kernel[] = "kernel k() {\n"
                               "  hbm in X: f32[2, 2];\n  hbm out Y: f32[2, 2];\n  sbuf x: f32[2, 2];\n"
                               "  dma0: load x, X[0, 0];\n  act: exp x, x;\n  dma1: store Y[0, 0], x;\n}\n";
  FILE *null = fopen("/dev/null", "w");
  Program *p = program_new("k.bfk", kernel, strlen(kernel), &t, null);
  parse(p);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  program_free(p);
  static const char on_pe[] = "kernel k() {\n  sbuf x: f32[2, 2];\n  pe: transpose x, x;\n}\n";
  p = program_new("k.bfk", on_pe, strlen(on_pe), &t, null);
  parse(p);
  check(p);
  assert_int_equal(p->diag.errors, 1);
  program_free(p);
  fclose(null);
  arena_free(arena);
}

/* Each malformed line is reported at its position, every one in one run. */
static void expect_errors(const char *text, const char *const *needles) {
  Arena *arena = arena_new();
  Target t;
  const char *messages;
  assert_int_equal(parse_text(text, arena, &t, &messages), -1);
  for (; *needles; needles++)
    if (!strstr(messages, *needles)) fail_msg("'%s' not in:\n%s", *needles, messages);
  arena_free(arena);
}

static const char header[] = "name = t\nclock_ghz = 1\n[engines]\nact = act\n[kind act]\n";

static void test_errors(void **state) {
  (void)state;
  char text[512];
  snprintf(text, sizeof text, "%soverheat = 1\nlanes = 1.5\nwait_cost = -1\nsem_latency = 3 4\n", header);
  expect_errors(text, (const char *[]){"t.target:6:1: error: unknown key 'overheat' in a [kind] section",
                                       "t.target:7:9: error: expected a non-negative integer",
                                       "t.target:8:13: error: expected a non-negative integer",
                                       "t.target:9:17: error: unexpected text after the value", NULL});
  snprintf(text, sizeof text, "%slanes = 1\nlanes = 2\n[kind act]\n", header);
  expect_errors(text, (const char *[]){"t.target:7:1: error: duplicate entry 'lanes'",
                                       "t.target:6:1: note: first set here",
                                       "t.target:8:1: error: duplicate section [kind act]", NULL});
  expect_errors("name = t\nclock_ghz = 1\n[engines]\nact = act\nact = act\ndma = dma\n",
                (const char *[]){"t.target:5:1: error: duplicate engine 'act'",
                                 "t.target:6:1: error: engine 'dma' is a dma engine, but the file has no [kind dma] section",
                                 NULL});
  expect_errors("name = t\nclock_ghz = 1\n[kind act]\n",
                (const char *[]){"t.target:4:1: error: missing engines", NULL});
  expect_errors("", (const char *[]){"t.target:1:1: error: missing 'name = ...'", "missing 'clock_ghz = ...'",
                                     "missing engines", NULL});
  expect_errors("name = 1t\nclock_ghz = -1\nwhat = 1\n[engines\n[kind tpu]\nx = y\n[engines]\nx = tpu\n",
                (const char *[]){"t.target:1:8: error: a target name is an identifier",
                                 "t.target:2:13: error: expected a non-negative decimal number",
                                 "t.target:3:1: error: unknown key 'what' at the top level",
                                 "t.target:4:1: error: a section header ends with ']'",
                                 "t.target:5:1: error: unknown section",
                                 "t.target:8:5: error: unknown engine kind 'tpu'", NULL});
  expect_errors("name = t\nclock_ghz = 1\n[engines]\nact = act\n[kind act]\n[limits]\nmatmul_psum_f32 = 2\n",
                (const char *[]){"t.target:7:1: error: matmul_psum_f32 is 1 (matmul writes an f32 psum tile) or 0 "
                                 "(any tile), not 2", NULL});
  expect_errors("name = t\nclock_ghz = 1\n[engines]\nact = act\n[kind act]\n[limits]\nmatmul_sbuf_inputs = 3\n",
                (const char *[]){"t.target:7:1: error: matmul_sbuf_inputs is 1 (matmul reads sbuf tiles) or 0 "
                                 "(any tile), not 3", NULL});
  /* entries after a malformed header are skipped, not reported again */
  Arena *arena = arena_new();
  Target t;
  const char *messages;
  assert_int_equal(parse_text("name = t\nclock_ghz = 1\n[kind tpu]\nx = y\n", arena, &t, &messages), -1);
  assert_null(strstr(messages, "x = y"));
  arena_free(arena);
  /* too many engines */
  char many[1024] = "name = t\nclock_ghz = 1\n[kind dma]\n[engines]\n";
  for (int e = 0; e <= BFRT_MAX_ENGINES; e++) snprintf(many + strlen(many), sizeof many - strlen(many), "d%d = dma\n", e);
  char expected[64];
  snprintf(expected, sizeof expected, "t.target:%d:1: error: too many engines (at most %d)", 5 + BFRT_MAX_ENGINES,
           BFRT_MAX_ENGINES);
  expect_errors(many, (const char *[]){expected, NULL});
}

/* Issue 9: absurd values gave negative busy and stall cycles; every key has
 * a range, stated in the message, and the boundary values are accepted. */
static void test_ranges(void **state) {
  (void)state;
  char text[1024];
  snprintf(text, sizeof text,
           "%soverhead = 999999999999999\nelems_per_cycle.elemwise = 1e-30\ntwo_input_factor = 1e-320\n"
           "dma_bytes_per_cycle = 1e-300\ndma_outstanding = 1025\nlanes = 65537\nsem_latency = 1000000001\n",
           header);
  expect_errors(text, (const char *[]){"t.target:6:12: error: overhead must be at most 1000000000",
                                       "t.target:7:28: error: elems_per_cycle.elemwise must be 0 or from 0.001 to 1000000",
                                       "t.target:8:20: error: two_input_factor must be 0 or from 0.001 to 1000",
                                       "t.target:9:23: error: dma_bytes_per_cycle must be 0 or from 0.001 to 1000000",
                                       "t.target:10:19: error: dma_outstanding must be at most 1024",
                                       "t.target:11:9: error: lanes must be at most 65536",
                                       "t.target:12:15: error: sem_latency must be at most 1000000000", NULL});
  expect_errors("name = t\nclock_ghz = 1e-320\n[engines]\nkernel = act\nfor = act\n[kind act]\n",
                (const char *[]){"t.target:2:13: error: clock_ghz must be from 0.001 to 1000",
                                 "t.target:4:1: error: 'kernel' is a reserved word of the kernel language",
                                 "t.target:5:1: error: 'for' is a reserved word of the kernel language", NULL});
  expect_errors("name = t\nclock_ghz = 1e400\n[engines]\nact = act\n[kind act]\n",
                (const char *[]){"t.target:2:13: error: number too large", NULL});
  Arena *arena = arena_new();
  Target t;
  const char *messages;
  snprintf(text, sizeof text,
           "%soverhead = 1000000000\nelems_per_cycle.elemwise = 0.001\ntwo_input_factor = 0\n"
           "dma_bytes_per_cycle = 1e6\ndma_outstanding = 1024\nlanes = 65536\n",
           header);
  assert_int_equal(parse_text(text, arena, &t, &messages), 0);
  assert_int_equal(t.costs.kind[BFRT_KIND_ACT].overhead, 1000000000);
  assert_true(t.costs.kind[BFRT_KIND_ACT].elems_per_cycle[BFRT_CLASS_ELEMWISE] == 0.001);
  arena_free(arena);
}

/* Issue 20: `const` became a keyword, but the target reader's own list
 * lacked it. Every reserved word of the lexer (util/keywords.def, the one
 * list) is refused as an engine name, at its position. */
static void test_keywords(void **state) {
  (void)state;
  static const char *const keywords[] = {
#define KEYWORD(spelling, token) spelling,
#include "util/keywords.def"
#undef KEYWORD
  };
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    char text[256], expected[128];
    snprintf(text, sizeof text, "name = t\nclock_ghz = 1\n[engines]\n%s = act\n[kind act]\n", keywords[i]);
    snprintf(expected, sizeof expected, "t.target:4:1: error: '%s' is a reserved word of the kernel language",
             keywords[i]);
    expect_errors(text, (const char *[]){expected, NULL});
  }
  expect_errors("name = t\nclock_ghz = 1\n[engines]\nconst = act\n[kind act]\n",
                (const char *[]){"t.target:4:1: error: 'const' is a reserved word of the kernel language", NULL});
}

/* NUL bytes and binary junk are errors, never crashes. */
static void test_binary(void **state) {
  (void)state;
  static const char junk[] = "name = t\0\nclock_ghz\0= 1\n\xff\xfe[\n\0";
  Arena *arena = arena_new();
  Target t;
  FILE *null = fopen("/dev/null", "w");
  assert_int_equal(target_parse("junk", junk, sizeof junk, arena, &t, null), -1);
  fclose(null);
  assert_int_equal(target_load("tests/no/such.target", arena, &t, null = fopen("/dev/null", "w")), -1);
  fclose(null);
  arena_free(arena);
}

/* The host's door (bfrt_costs_load): the same costs as the compiler reads,
 * and every error handed back positioned, truncated to the buffer, with
 * the destination untouched. */
static void test_costs_load(void **state) {
  (void)state;
  bfrt_costs costs, before;
  char err[512];
  assert_int_equal(bfrt_costs_load(&costs, "targets/trn1.target", err, sizeof err), 0);
  assert_string_equal(err, "");
  assert_memory_equal(&costs, &target_default()->costs, sizeof costs);

  char path[] = "/tmp/bfsync-costs-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("name = t\nclock_ghz = 1.4\n[engines]\npe = pe\n[kind pe]\noverhead = x\nlanes = 1e9\n", f);
  fclose(f);
  memset(&before, 0x5a, sizeof before);
  costs = before;
  assert_int_equal(bfrt_costs_load(&costs, path, err, sizeof err), -1);
  assert_memory_equal(&costs, &before, sizeof costs);
  char expect[128];
  snprintf(expect, sizeof expect, "%s:6:12: error: expected a non-negative integer", path);
  assert_non_null(strstr(err, expect));
  assert_non_null(strstr(err, ":7:9: error:")); /* every error, not only the first */
  char tiny[8];
  assert_int_equal(bfrt_costs_load(&costs, path, tiny, sizeof tiny), -1);
  assert_int_equal(strlen(tiny), sizeof tiny - 1);
  assert_int_equal(strncmp(tiny, path, sizeof tiny - 1), 0);
  assert_int_equal(bfrt_costs_load(&costs, path, NULL, 0), -1);
  unlink(path);

  assert_int_equal(bfrt_costs_load(&costs, "/nonexistent/x.target", err, sizeof err), -1);
  assert_non_null(strstr(err, "cannot open target file /nonexistent/x.target"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builtin_is_the_file),
      cmocka_unit_test(test_costs_load),
      cmocka_unit_test(test_two_queues),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_keywords),
      cmocka_unit_test(test_binary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

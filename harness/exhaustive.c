/* exhaustive.c: the exhaustive small scope.
 *
 * Every kernel within the bound: at most 3 instructions over the engines
 * of the scope (core: act, dve, pool; all: also pe, dma and, on a target
 * with DMA queues, the pinned queue dma1), at most 2
 * loops (nested or side by side, never empty), at most 2 shared tiles with
 * 1 or 2 slots, with dma, one hbm tensor, loop bounds from the parameter N
 * or the outer loop variable, conditions on N or the innermost loop's
 * variable (the 2 loops are 2 scopes: loops or conditionals):
 *
 *   kernel  = decl* item+
 *   item    = ENGINE ":" access ";"
 *           | "for" v "in" 0 ".." hi "{" item+ "}"
 *           | "if" "(" cond ")" "{" item+ "}" [ "else" "{" item+ "}" ]
 *   hi      = "N" | u | u "+" 1                      (u: the enclosing loop's variable)
 *   cond    = "N" ">" 1 | v "==" 0 | v "%" 2 "==" 1  (v: the innermost loop's variable)
 *   item    = ENGINE ":" access ";"                  (ENGINE: act dve pool pe dma dma1)
 *   access  = "fill" ref "," 1                       (act | dve | pool: write)
 *           | "copy" own "," ref                     (read; own: the engine's private tile)
 *           | "scale" ref "," ref "," 2              (read and write)
 *           | "transpose" ref "," own                (pe: write)
 *           | "transpose" own "," ref                (pe: read)
 *           | "matmul_acc" ref "," own "," own       (pe: read and write)
 *           | "transpose" ref "," ref                (pe: read and write, instead of matmul_acc
 *                                                     where matmul writes f32 psum: matmul_psum_f32)
 *           | "load" ref "," hbm                     (dma, dma1: write the tile, read H)
 *           | "store" hbm "," ref                    (dma, dma1: read the tile, write H)
 *   ref     = tile | tile "[" 0 | 1 | v "%" 2 | "(" v "+" 1 ")" "%" 2 "]"
 *                                                    (v: the innermost loop's variable)
 *   hbm     = "H[" row ", 0]"                        (row: the ref's slot expression, or 0)
 *
 * With --views (the views scope) the tiles are [2, 1] and H is [4, 1], pe
 * is left out (its transposes need square tiles), and each reference is
 * all of its slot or one row of it:
 *
 *   ref     = slotted [ "[" r ":" r "+" 1 ", :]" ]  (slotted: the ref above)
 *   r       = 0 | 1 | v "%" 2                        (v: the innermost loop's variable)
 *   own     = "own_" ENGINE (all of a ref) | "own1_" ENGINE ([1, 1], beside a row)
 *   hbm     = "H[" row ", 0]"                        (all of a ref: H's tile `row`)
 *           | "H[2 * (" row ") + " r " : 2 * (" row ") + " r " + 1, 0:1]"
 *                                                    (a row: its own element of H)
 *
 * so that accesses meet as disjoint and adjacent regions (rows 0 and 1 of
 * one slot), nested ones (a row and all of its slot), regions a loop
 * variable's parity moves (disjoint across iterations of different
 * parity), in tiles and in H alike, and every one of those as RAW, WAR or
 * WAW on one engine or two, in every control structure above. (Partial
 * overlaps that nest neither way, strided and ragged regions are the
 * campaign's: harness/gen.c.)
 *
 * On the default target `dma:` means any of 16 queues and assign_queues
 * deals them round robin (dma0, dma1, ...), while `dma1:` pins one; pinned
 * transfers do not move the round robin. So two transfers land on two
 * queues (dma + dma, dma + dma1, dma1 + dma) or share one (dma1 + dma1; with
 * three, dma + dma + dma1), and hbm conflicts between queues meet the
 * per-cell tracking of H, as conflicts within one queue meet its order. On
 * a target whose only queue is `dma`, dma1 does not exist and the scope is
 * the five engines.
 *
 * Every pair of instructions then meets as RAW, WAR, WAW or not at all, on
 * one engine or across two, in straight-line code, in one loop (same or
 * loop-carried iteration, slot distance 0 or 1) or across loops. Each
 * kernel is judged by the oracle at N = 0, 1, 2, 3 (trip counts 0 to 3;
 * inner loops bounded by u run 0 to 3 times too; every condition is both
 * true and false among them), under both sync modes. Conditionals add the
 * branch cases: a producer in a branch and its consumer after it or in the
 * other branch, producers in both branches, a branch taken in some
 * iterations only.
 *
 * Canonical forms, so no kernel is a mere renaming of another: act, dve
 * and pool, and the tiles, are numbered in order of first use (act, dve
 * and pool run these ops identically; pe, dma and dma1 are themselves; the tiles differ only by their slot counts, which
 * are enumerated); a tile never used is not declared; and the first slot
 * expression of each two-slot tile is 0 or v % 2, since relabelling its
 * slots (0 <-> 1, v % 2 <-> (v + 1) % 2) gives an equivalent kernel; in
 * the views scope a kernel without parity rows has row 0 as its first
 * row view, since swapping every tile's two rows is a renaming too. */
#include "harness/campaign.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/program.h"
#include "util/clock.h"
#include "util/json.h"
#include "harness/pool.h"
#include "transform/oracle.h"
#include "transform/sync.h"


#define EX_MAX_INSTRS EXHAUSTIVE_MAX_INSTRUCTIONS
#define EX_MAX_LOOPS 2
#define EX_MAX_TOKENS (4 * EX_MAX_INSTRS)

#define EX_ENGINES 6
enum { EX_PE = 3, EX_DMA = 4, EX_DMA1 = 5 }; /* engines 0..2 (act, dve, pool) run the generic ops alike */
enum { TOK_INSTR, TOK_LOOP, TOK_IF, TOK_ELSE, TOK_END };
enum { ACC_WRITE, ACC_READ, ACC_UPDATE, ACC_KINDS };

typedef struct ExToken {
  int kind;
  int hi; /* loop: 0 "N", 1 the outer variable, 2 the outer variable + 1; if: the cond form */
} ExToken;

/* An open scope while building skeletons or printing them. */
typedef struct ExScope {
  int kind;      /* TOK_LOOP or TOK_IF */
  int loop;      /* TOK_LOOP: its number; TOK_IF: the innermost loop around it, or -1 */
  bool has_else; /* TOK_IF */
} ExScope;



/* With --views the tiles have 2 partitions and each reference is one of
 * them, or both: all of the tile, [0:1, :], [1:2, :], or inside a loop
 * [v % 2 : v % 2 + 1, :], the row the innermost variable's parity picks. */
enum { VIEW_WHOLE, VIEW_ROW0, VIEW_ROW1, VIEW_PARITY, VIEW_FORMS };

typedef struct ExInstr {
  int engine, access, tile, form, view;
} ExInstr;

typedef struct Exhaustive {
  const ExhaustiveScope *scope;
  ExToken tok[EX_MAX_TOKENS];
  int ntok;
  int slots[2];
  ExInstr ins[EX_MAX_INSTRS];
  int nins;
  int inner[EX_MAX_INSTRS]; /* the innermost loop around each instruction, or -1 */
  ExScope open[EX_MAX_LOOPS]; /* ex_items: the scopes open at the current point */
  int engines; /* of ex_engines, in order: the scope's, and dma1 where the target has it */
  int64_t kernels, checks, instructions, waits, failures, held;
  uint64_t index; /* canonical kernels seen so far, for dividing the work */
  int job, jobs;
} Exhaustive;

/* Slot forms of a two-slot tile: 0, 1, and inside a loop v % 2, (v + 1) % 2;
 * even forms are the unshifted ones. */
static int form_count(const Exhaustive *x, int i) { return x->inner[i] < 0 ? 2 : 4; }

/* The view forms of instruction i: one (all of the tile) without
 * --views; VIEW_PARITY inside a loop only. */
static int view_count(const Exhaustive *x, int i) {
  return !x->scope->views ? 1 : x->inner[i] < 0 ? VIEW_PARITY : VIEW_FORMS;
}

/* A view's first row, as text. */
static void print_view_row(FILE *f, const Exhaustive *x, int i, int view) {
  if (view == VIEW_PARITY) fprintf(f, "v%d %% 2", x->inner[i]);
  else fputc(view == VIEW_ROW1 ? '1' : '0', f);
}

static void print_view(FILE *f, const Exhaustive *x, int i, int view) {
  if (view == VIEW_WHOLE) return;
  fputc('[', f);
  print_view_row(f, x, i, view);
  fputs(" : ", f);
  print_view_row(f, x, i, view);
  fputs(" + 1, :]", f);
}

static void print_ref(FILE *f, const Exhaustive *x, int i, int tile, int form) {
  fputc("ab"[tile], f);
  if (x->slots[tile] == 2) {
    if (form < 2)
      fprintf(f, "[%d]", form);
    else
      fprintf(f, form == 2 ? "[v%d %% 2]" : "[(v%d + 1) %% 2]", x->inner[i]);
  }
  print_view(f, x, i, x->ins[i].view);
}

/* Instruction i's own tile: own_ENGINE, or own1_ENGINE ([1, 1]) beside a
 * view of one row. */
static void print_own(FILE *f, const Exhaustive *x, int i, const char *engine) {
  fprintf(f, "own%s_%s", x->ins[i].view == VIEW_WHOLE ? "" : "1", engine);
}

static const char *const ex_engines[EX_ENGINES] = {"act", "dve", "pool", "pe", "dma", "dma1"};

static bool is_dma(int engine) { return engine >= EX_DMA; }

/* The access kinds each engine has here (dma has no update). */
static int access_count(int engine) { return is_dma(engine) ? 2 : ACC_KINDS; }

/* Whether pe's update is a matmul_acc (else a transpose of the tile onto
 * itself): matmul_acc writes f32 psum on a target that says so. */
static bool pe_update_is_matmul(const Exhaustive *x) {
  const Target *target = x->scope->target ? x->scope->target : target_default();
  return !target->limits.matmul_psum_f32;
}

/* Whether the instruction names its engine's private tile own_ENGINE. */
static bool uses_own(const Exhaustive *x, const ExInstr *in) {
  if (in->engine == EX_PE) return in->access != ACC_UPDATE || pe_update_is_matmul(x);
  return in->engine < EX_PE && in->access == ACC_READ;
}

static void print_decls(FILE *f, const Exhaustive *x) {
  bool tile[2] = {false, false}, own[2][EX_ENGINES] = {{false}}, hbm = false;
  int rows = x->scope->views ? 2 : 1;
  for (int i = 0; i < x->nins; i++) {
    tile[x->ins[i].tile] = true;
    own[x->ins[i].view != VIEW_WHOLE][x->ins[i].engine] |= uses_own(x, &x->ins[i]);
    hbm |= is_dma(x->ins[i].engine);
  }
  if (hbm) fprintf(f, "  hbm inout H: f32[%d, 1];\n", 2 * rows);
  for (int t = 0; t < 2; t++)
    if (tile[t]) fprintf(f, "  sbuf %c%s: f32[%d, 1];\n", "ab"[t], x->slots[t] == 2 ? "[2]" : "", rows);
  for (int e = 0; e < EX_ENGINES; e++)
    for (int part = 0; part < 2; part++)
      if (own[part][e]) fprintf(f, "  sbuf own%s_%s: f32[%d, 1];\n", part ? "1" : "", ex_engines[e], part ? 1 : rows);
}

/* The tile of H a dma access moves: the tile's slot expression, so a
 * slotted buffer moves through matching tiles of H; 0 for a one-slot tile. */
static void print_hbm_tile(FILE *f, const Exhaustive *x, int i) {
  const ExInstr *in = &x->ins[i];
  if (x->slots[in->tile] == 1 || in->form < 2)
    fputc(x->slots[in->tile] == 1 || in->form == 0 ? '0' : '1', f);
  else
    fprintf(f, in->form == 2 ? "v%d %% 2" : "(v%d + 1) %% 2", x->inner[i]);
}

/* H's part for a dma access: that tile, H[T, 0]; with a view of one row,
 * the element slice of that row of it, H[2 T + r : 2 T + r + 1, 0:1], so
 * every cell of a tile moves through its own cell of H. */
static void print_hbm(FILE *f, const Exhaustive *x, int i) {
  if (x->ins[i].view == VIEW_WHOLE) {
    fputs("H[", f);
    print_hbm_tile(f, x, i);
    fputs(", 0]", f);
    return;
  }
  for (int end = 0; end < 2; end++) {
    fputs(end ? " : 2 * (" : "H[2 * (", f);
    print_hbm_tile(f, x, i);
    fputs(") + ", f);
    print_view_row(f, x, i, x->ins[i].view);
    if (end) fputs(" + 1", f);
  }
  fputs(", 0:1]", f);
}

static void print_access(FILE *f, const Exhaustive *x, int i) {
  const ExInstr *in = &x->ins[i];
  const char *own = ex_engines[in->engine];
  if (is_dma(in->engine)) {
    if (in->access == ACC_WRITE) {
      fputs("load ", f);
      print_ref(f, x, i, in->tile, in->form);
      fputs(", ", f);
      print_hbm(f, x, i);
    } else {
      fputs("store ", f);
      print_hbm(f, x, i);
      fputs(", ", f);
      print_ref(f, x, i, in->tile, in->form);
    }
    return;
  }
  if (in->engine == EX_PE) {
    bool matmul = in->access == ACC_UPDATE && pe_update_is_matmul(x);
    fputs(matmul ? "matmul_acc " : "transpose ", f);
    if (in->access == ACC_READ) print_own(f, x, i, own), fputs(", ", f);
    print_ref(f, x, i, in->tile, in->form);
    if (in->access == ACC_WRITE) fputs(", ", f), print_own(f, x, i, own);
    if (matmul) fputs(", ", f), print_own(f, x, i, own), fputs(", ", f), print_own(f, x, i, own);
    else if (in->access == ACC_UPDATE) {
      fputs(", ", f);
      print_ref(f, x, i, in->tile, in->form);
    }
    return;
  }
  fputs(in->access == ACC_WRITE ? "fill " : in->access == ACC_READ ? "copy " : "scale ", f);
  if (in->access == ACC_READ) print_own(f, x, i, own), fputs(", ", f);
  print_ref(f, x, i, in->tile, in->form);
  if (in->access == ACC_UPDATE) {
    fputs(", ", f);
    print_ref(f, x, i, in->tile, in->form);
  }
  fputs(in->access == ACC_WRITE ? ", 1" : in->access == ACC_UPDATE ? ", 2" : "", f);
}

/* The innermost loop among the first depth open scopes, or -1. */
static int innermost_loop(const ExScope *open, int depth) {
  return depth > 0 ? open[depth - 1].loop : -1;
}

static char *ex_text(const Exhaustive *x) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  fprintf(f, "kernel small(N: int) {\n");
  print_decls(f, x);
  int depth = 1, instr = 0, loop = 0;
  ExScope open[EX_MAX_LOOPS];
  for (int k = 0; k < x->ntok; k++) {
    const ExToken *t = &x->tok[k];
    int u = innermost_loop(open, depth - 1);
    if (t->kind == TOK_END) {
      depth--;
      fprintf(f, "%*s}\n", 2 * depth, "");
    } else if (t->kind == TOK_ELSE) {
      fprintf(f, "%*s} else {\n", 2 * (depth - 1), "");
    } else if (t->kind == TOK_IF) {
      fprintf(f, "%*sif (", 2 * depth, "");
      if (t->hi == 0)
        fputs("N > 1", f);
      else
        fprintf(f, t->hi == 1 ? "v%d == 0" : "v%d %% 2 == 1", u);
      fputs(") {\n", f);
      open[depth - 1] = (ExScope){TOK_IF, u, false};
      depth++;
    } else if (t->kind == TOK_LOOP) {
      fprintf(f, "%*sfor v%d in 0 .. ", 2 * depth, "", loop);
      if (t->hi == 0)
        fputs("N", f);
      else
        fprintf(f, "v%d%s", u, t->hi == 2 ? " + 1" : "");
      fputs(" {\n", f);
      open[depth - 1] = (ExScope){TOK_LOOP, loop++, false};
      depth++;
    } else {
      fprintf(f, "%*s%s: ", 2 * depth, "", ex_engines[x->ins[instr].engine]);
      print_access(f, x, instr++);
      fputs(";\n", f);
    }
  }
  fputs("}\n", f);
  fclose(f);
  return text;
}

/* Swapping the two rows of every tile (and so of every tile of H) maps
 * row 0 and row 1 onto each other and a parity row v % 2 onto (v + 1) % 2,
 * which is not enumerated: a kernel without parity rows is canonical when
 * its first row view is row 0. */
static bool canonical_rows(const Exhaustive *x) {
  int first = VIEW_WHOLE;
  for (int i = 0; i < x->nins; i++) {
    if (x->ins[i].view == VIEW_PARITY) return true;
    if (first == VIEW_WHOLE) first = x->ins[i].view;
  }
  return first != VIEW_ROW1;
}

/* Engines and tiles numbered by first use; each two-slot tile's first slot
 * expression unshifted; an unused tile keeps one slot. */
static bool canonical(const Exhaustive *x) {
  int next_engine = 0, next_tile = 0;
  bool seen_form[2] = {false, false};
  for (int i = 0; i < x->nins; i++) {
    const ExInstr *in = &x->ins[i];
    bool generic = in->engine < EX_PE; /* act, dve, pool: numbered by first use */
    if ((generic && in->engine > next_engine) || in->tile > next_tile) return false;
    next_engine += generic && in->engine == next_engine;
    next_tile += in->tile == next_tile;
    if (x->slots[in->tile] == 2 && !seen_form[in->tile]) {
      if (in->form % 2) return false;
      seen_form[in->tile] = true;
    }
  }
  return (next_tile == 2 || x->slots[1] == 1) && canonical_rows(x);
}

/* Judge one kernel text with the oracle at N = 0..3, both sync modes. */
static void ex_check(Exhaustive *x, const char *text) {
  const Target *target = x->scope->target ? x->scope->target : target_default();
  Program *p = program_new("small.bfk", text, strlen(text), target, stderr);
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors) bug("exhaustive: the enumerated kernel does not check:\n%s", text);
  Oracle *o[4];
  int64_t params[4][1] = {{0}, {1}, {2}, {3}};
  for (int n = 0; n < 4; n++)
    if (!(o[n] = oracle_new(p, params[n]))) bug("exhaustive: the sequential walk failed:\n%s", text);
  bool failed = false;
  for (int sync = 0; sync < 2; sync++) {
    transform_sync(p, (SyncMode)sync);
    if (p->diag.errors) bug("exhaustive: the transform reported an error:\n%s", text);
    ir_validate(p);
    for (int n = 0; n < 4; n++) {
      OracleStats st;
      oracle_check(o[n], x->scope->schedules, (uint64_t)n + 1, NULL, &st);
      x->checks++;
      x->instructions += st.instructions;
      x->waits += st.waits;
      x->held += st.held;
      /* H's tiles are all one shape: tracked per cell, no wait is late even by a fallback */
      bool late = sync == SYNC_BARRIER_FREE && st.late_explained > 0;
      if ((oracle_failed(&st) || late) && !failed) {
        failed = true;
        x->failures++;
        fprintf(stderr,
                "bfsync: exhaustive: FAILED (%s, N=%d): races %" PRId64 ", late %" PRId64
                " (+%" PRId64 " explained by a fallback), deadlocks %" PRId64 ", mismatches %" PRId64 "\n%s",
                sync_name((SyncMode)sync), n, st.races, st.late, st.late_explained, st.deadlocks, st.mismatches,
                text);
      }
    }
  }
  program_free(p);
}

static void ex_kernel(Exhaustive *x) {
  if (!canonical(x)) return;
  if (x->index++ % (uint64_t)x->jobs != (uint64_t)x->job) return;
  x->kernels++;
  if (x->scope->dry_run) return;
  char *text = ex_text(x);
  ex_check(x, text);
  free(text);
}

/* Every engine, access, tile and slot form for instruction k onwards. */
static void ex_assign(Exhaustive *x, int k) {
  if (k == x->nins) {
    ex_kernel(x);
    return;
  }
  for (int e = 0; e < x->engines; e++)
    for (int a = 0; a < access_count(e) && !(e == EX_PE && x->scope->views); a++)
      for (int t = 0; t < 2; t++)
        for (int f = 0; f < (x->slots[t] == 2 ? form_count(x, k) : 1); f++)
          for (int v = 0; v < view_count(x, k); v++) {
            x->ins[k] = (ExInstr){e, a, t, f, v};
            ex_assign(x, k + 1);
          }
}

/* The innermost loop of each instruction, from the skeleton. */
static void ex_scopes(Exhaustive *x) {
  int open[EX_MAX_LOOPS], depth = 0, loop = 0;
  x->nins = 0;
  for (int k = 0; k < x->ntok; k++) {
    int u = depth ? open[depth - 1] : -1;
    if (x->tok[k].kind == TOK_LOOP)
      open[depth++] = loop++;
    else if (x->tok[k].kind == TOK_IF)
      open[depth++] = u;
    else if (x->tok[k].kind == TOK_END)
      depth--;
    else if (x->tok[k].kind == TOK_INSTR)
      x->inner[x->nins++] = u;
  }
}

static void ex_skeleton_done(Exhaustive *x) {
  ex_scopes(x);
  for (int a = 1; a <= 2; a++)
    for (int b = 1; b <= 2; b++) {
      x->slots[0] = a;
      x->slots[1] = b;
      ex_assign(x, 0);
    }
}

/* Skeletons: item sequences at depth with instrs and scopes (loops or
 * conditionals) still allowed; body_items counts the items of the innermost
 * open body (never empty). */
static void ex_items(Exhaustive *x, int depth, int instrs, int scopes, int body_items) {
  if (depth == 0 && x->ntok > 0) ex_skeleton_done(x);
  /* deeper calls reuse x->open[depth - 1] once this scope is closed */
  ExScope top = depth > 0 ? x->open[depth - 1] : (ExScope){TOK_END, -1, false};
  int u = innermost_loop(x->open, depth);
  if (depth > 0 && body_items > 0) {
    x->tok[x->ntok++] = (ExToken){TOK_END, 0};
    ex_items(x, depth - 1, instrs, scopes, 1);
    x->ntok--;
    if (top.kind == TOK_IF && !top.has_else && instrs > 0) {
      x->open[depth - 1] = (ExScope){TOK_IF, top.loop, true};
      x->tok[x->ntok++] = (ExToken){TOK_ELSE, 0};
      ex_items(x, depth, instrs, scopes, 0);
      x->ntok--;
    }
    x->open[depth - 1] = top;
  }
  if (instrs > 0) {
    x->tok[x->ntok++] = (ExToken){TOK_INSTR, 0};
    ex_items(x, depth, instrs - 1, scopes, body_items + 1);
    x->ntok--;
  }
  if (scopes > 0 && instrs > 0) {
    for (int hi = 0; hi < (u >= 0 ? 3 : 1); hi++) {
      x->open[depth] = (ExScope){TOK_LOOP, 0, false}; /* (any loop number: only >= 0 matters here) */
      x->tok[x->ntok++] = (ExToken){TOK_LOOP, hi};
      ex_items(x, depth + 1, instrs, scopes - 1, 0);
      x->ntok--;
    }
    for (int cond = 0; cond < (u >= 0 ? 3 : 1); cond++) {
      x->open[depth] = (ExScope){TOK_IF, u, false};
      x->tok[x->ntok++] = (ExToken){TOK_IF, cond};
      ex_items(x, depth + 1, instrs, scopes - 1, 0);
      x->ntok--;
    }
  }
}

/* One job's share of the scope (a pool item is a job), counted in *out:
 * kernels, oracle checks (as schedules), dynamic instructions, waits and
 * failures. */
typedef struct ExRun {
  const ExhaustiveScope *scope;
  Counts sum;     /* in the parent */
  bool crashed;
} ExRun;

/* The engines enumerated: the scope's 3 or 5, and the pinned dma1 with
 * the 5 where `dma` means any queue and dma1 is one of them. */
static int scope_engines(const ExhaustiveScope *scope) {
  const Target *target = scope->target ? scope->target : target_default();
  bool queues = target_any_queue(target, "dma") && target_engine(target, "dma1") >= 0;
  return scope->engines == 5 && queues ? EX_ENGINES : scope->engines;
}

static void ex_job(void *ctx, uint64_t job, Outcome *out) {
  const ExhaustiveScope *scope = ((const ExRun *)ctx)->scope;
  Exhaustive *x = calloc(1, sizeof *x);
  if (!x) bug("exhaustive: out of memory");
  x->scope = scope;
  x->engines = scope_engines(scope);
  x->job = (int)job;
  x->jobs = scope->jobs;
  ex_items(x, 0, scope->instructions, EX_MAX_LOOPS, 0);
  *out = (Outcome){.counts = {.kernels = x->kernels, .schedules = x->checks, .instructions = x->instructions,
                              .oracle_waits = x->waits, .failures = x->failures, .oracle_held = x->held}};
  free(x);
}

static void ex_done(void *ctx, uint64_t job, const Outcome *out) {
  (void)job;
  ExRun *t = ctx;
  add_counts(&t->sum, &out->counts);
  t->crashed |= !strcmp(out->stage, "crash");
}

int exhaustive_run(const ExhaustiveScope *c) {
  int64_t start = clock_now_ms();
  ExRun t = {.scope = c};
  Pool pool = {0, (uint64_t)c->jobs, c->jobs, ex_job, ex_done, NULL, &t};
  pool_catch_signals();
  pool_run(&pool);
  pool_reraise();
  bool crashed = t.crashed;
  Counts sum = t.sum;
  double seconds = (double)(clock_now_ms() - start) / 1000;
  if (c->json) {
    JsonWriter w;
    jw_init(&w, stdout, false);
    jw_object(&w);
    jw_key_bool(&w, "exhaustive", true);
    jw_key_int(&w, "kernels", sum.kernels);
    jw_key_int(&w, "oracle_checks", sum.schedules);
    jw_key_int(&w, "instructions", sum.instructions);
    jw_key_int(&w, "waits", sum.oracle_waits);
    jw_key_int(&w, "held", sum.oracle_held);
    jw_key_int(&w, "failures", sum.failures);
    jw_key_bool(&w, "crashed", crashed);
    jw_key(&w, "seconds");
    jw_fixed(&w, seconds, 1);
    jw_close(&w);
    putchar('\n');
  } else {
    printf("exhaustive: %" PRId64 " kernels (<= %d instructions over %d engines, <= %d loops, 1-2 slots%s), %" PRId64
           " oracle checks (N = 0..3, both sync modes), %" PRId64 " dynamic instructions, %" PRId64
           " waits, %" PRId64 " ops held by back-pressure; %" PRId64 " failures%s; %.1f s\n",
           sum.kernels, c->instructions, scope_engines(c) - (c->views && c->engines == 5), EX_MAX_LOOPS,
           c->views ? ", views of rows" : "", sum.schedules, sum.instructions, sum.oracle_waits,
           sum.oracle_held, sum.failures,
           crashed ? ", a worker CRASHED" : "", seconds);
  }
  return sum.failures || crashed ? 1 : 0;
}

/* emit_c.c: the transform's per-engine streams, printed as one C99 file.
 *
 * The backend decides nothing about synchronization: every wait, barrier,
 * loop and bookkeeping assignment is already a node in Program->ir, and this
 * file only prints them, one static function per engine, against the
 * runtime's kernel API in bfrt_kernel.h. The output is meant to be read by the people who
 * port the runtime, so it stays plain: loops are C for-loops whose bounds
 * are evaluated once at entry, loop variables keep their source names when
 * that cannot clash with anything, thresholds are ordinary integer
 * expressions, and each op and wait carries a comment pointing back to the
 * kernel source. It includes only <stdint.h> and "bfrt_kernel.h", uses no
 * extension, atomic or thread, and compiles cleanly with
 * gcc -std=c99 -Wall -Wextra -Werror -pedantic and with tcc.
 *
 * Every name the backend invents starts with bf_ or BF_; a source name that
 * could collide with those, with a C keyword or with <stdint.h> is replaced
 * by an invented one.
 *
 * Guarded waits follow transform/ir.h: `bf_wait(cx, e, bf_known, T, line)`
 * waits only when T > bf_known[e] and then sets bf_known[e] = T; one array
 * per engine function, reset by bf_forget after a barrier (one call, not
 * one line per producer engine: trn1 has 20 engines). Each op is one call of a helper per
 * operand shape, bf_op_ttt(cx, op, line, tile, slot, ...), which builds
 * the operand array in its own frame and calls bfrt_op: the engine
 * function's stack stays the same size however many ops it has. Both keep
 * the file (and tcc's work) in proportion to the kernel. Integer
 * arithmetic wraps (bf_add, bf_sub, bf_mul) as the language defines it.
 * Bookkeeping is charged with one bfrt_bookkeep call per run of adjacent
 * bookkeeping nodes, so the total equals the IR's definition: each executed
 * IR_SET and IR_STORE, and each evaluated IR_WAIT with a non-constant
 * threshold. On a target that limits `registers`, the values
 * transform/resources.c keeps in scratch are charged where they are
 * accessed (bfrt_spill before the node, bf_wait_s for a wait taken, one
 * per further loop test); the C itself keeps them in variables, so the
 * synchronization is the same. The descriptor closes the file, the one
 * external symbol, bfk_<kernel>_<mode> (emit_c_symbol: the sync mode's
 * identifier, so both modes of a kernel link into one host); the JIT
 * finds the kernel by that name. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "transform/sync.h"
#include "transform/resources.h"
#include "transform/sync.h"

static const char *const op_ids[] = {
#define OP(id, name, sig, engines, shape, cls, acc) #id,
#include "runtime/ops.def"
#undef OP
};

static const char *const kind_ids[BFRT_NKINDS] = {"PE", "ACT", "DVE", "POOL", "DMA"};

static const char *const c_reserved[] = {
    "auto",  "break",    "case",     "char",       "const",  "continue", "default",  "do",
    "double", "else",    "enum",     "extern",     "float",  "for",      "goto",     "if",
    "inline", "int",     "long",     "register",   "restrict", "return", "short",    "signed",
    "sizeof", "static",  "struct",   "switch",     "typedef", "union",   "unsigned", "void",
    "volatile", "while", "_Bool",    "_Complex",   "_Imaginary", "asm",  "typeof",   "bool",
    "true",   "false",   "NULL",     "main"};

/* Prefixes of <stdint.h>'s macros and of the names the backend invents. */
static const char *const reserved_prefixes[] = {"bf", "BF", "_", "INT", "UINT", "SIZE_",
                                                "PTRDIFF_", "WCHAR_", "WINT_", "SIG_ATOMIC_"};

typedef struct Emitter {
  const Program *p;
  FILE *out;
  const char **loop_names;  /* C name of each loop variable, by loop id */
  const char **param_names; /* C name of each parameter */
  const IrStream *stream;   /* the engine being printed */
  const char **engine_ids;  /* sanitized engine, tile and tensor names, made once: */
  const char **tile_ids;    /* per-use copies would cost the arena a few words */
  const char **tensor_ids;  /* for every wait and operand */
  int depth;                /* indentation level */
  /* Loop-invariant subexpressions printed once per iteration as const
   * temporaries bf_tK (hoist_loop): active ones, innermost last. */
  const IrExpr **hoisted;
  int nhoisted, hoist_cap, ntemps;
  bool *var_set; /* by bookkeeping scalar: set somewhere in the body being hoisted from */
  /* Values kept in scratch to fit the target's registers (resources.c):
   * by engine, NULL when none; each access is charged with bfrt_spill. */
  const struct EngineSpill *spills;
  int *spill_stamp, stamp; /* by bookkeeping scalar: counted for the node being printed */
} Emitter;

/* What an engine keeps in scratch, and what each access costs it. */
typedef struct EngineSpill {
  bool any;
  SpillPlan plan;
  int per_op;   /* before each op: its last-read counts in scratch, loaded and stored
                   (2 each), and its consumers' that its back-pressure compare loads */
  int per_wait; /* at each wait taken: its last-read counts, loaded and stored (2 each) */

} EngineSpill;

/* What one engine's stream refers to, so that it declares exactly that and
 * nothing is unused under -Wall -Wextra. */
typedef struct Uses {
  bool *param;      /* by parameter index */
  bool *known;      /* by engine: waited on */
  bool *var_read;   /* by bookkeeping scalar */
  bool cx;          /* bf_cx is used */
} Uses;

/* ---- Names. */

static bool is_reserved(const char *name) {
  for (size_t i = 0; i < sizeof c_reserved / sizeof c_reserved[0]; i++)
    if (!strcmp(name, c_reserved[i])) return true;
  for (size_t i = 0; i < sizeof reserved_prefixes / sizeof reserved_prefixes[0]; i++)
    if (!strncmp(name, reserved_prefixes[i], strlen(reserved_prefixes[i]))) return true;
  size_t n = strlen(name);
  return n >= 2 && !strcmp(name + n - 2, "_t");
}

static bool is_identifier(const char *name) {
  if (!name[0] || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  for (const char *c = name; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_')) return false;
  return true;
}

/* The source name when it is safe in C, else an invented name. */
static const char *c_name(Arena *a, const char *source, const char *kind, int id) {
  if (is_identifier(source) && !is_reserved(source) && strlen(source) < 64) return source;
  return arena_printf(a, "bf_%s%d", kind, id);
}

/* name (the id-th of its kind) with every character outside [A-Za-z0-9_]
 * replaced, for invented names. Names longer than 40 characters (C99
 * promises 63 significant ones) are cut to 40 and given "_ID", so two
 * long names with one prefix stay distinct, and distinct from any name of
 * 40 characters or fewer. */
static const char *sanitize_id(Arena *a, const char *name, int id) {
  char *s = strlen(name) <= 40 ? arena_strndup(a, name, strlen(name)) : arena_printf(a, "%.40s_%d", name, id);
  for (char *c = s; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_')) *c = '_';
  return s;
}


/* Source text made safe inside a one-line block comment. */
void emit_comment_text(FILE *out, const char *text, size_t len) {
  bool space = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (isspace(c) || !isprint(c)) {
      space = true;
      continue;
    }
    if (space) fputc(' ', out);
    space = false;
    fputc(c, out);
    /* Break the sequences that would end the comment or form a trigraph. */
    if ((c == '*' && i + 1 < len && text[i + 1] == '/') ||
        (c == '?' && i + 1 < len && text[i + 1] == '?'))
      fputc(' ', out);
  }
}


/* ---- Uses of one stream. */

static void uses_expr(Uses *u, const IrExpr *x) {
  if (!x) return;
  switch (x->kind) {
  case IX_PARAM: u->param[x->id] = true; break;
  case IX_VAR: u->var_read[x->id] = true; break;
  case IX_DIV:
  case IX_MOD:
  case IX_ELEM:
  case IX_HBM_ROW:
  case IX_TILE_AT: u->cx = true; break;
  case IX_ROWS:
    u->cx = true;
    uses_expr(u, x->rows->ncols);
    break;
  default: break;
  }
  uses_expr(u, x->a);
  uses_expr(u, x->b);
  if (x->kind != IX_HBM_ROW && x->kind != IX_TILE_AT) uses_expr(u, x->c);
}

/* Whether a loop must check its trip count at entry (bfrt_loop): hi - lo
 * stays below 2^63 when lo is a constant >= 0 or hi a constant < 0, the
 * usual `for i in 0 .. N`. */
static bool loop_checked(const IrNode *n) {
  return !(n->lo->kind == IX_CONST && n->lo->value >= 0) && !(n->hi->kind == IX_CONST && n->hi->value < 0);
}

static void uses_nodes(Uses *u, const IrNode *n) {
  for (; n; n = n->next) {
    switch (n->kind) {
    case IR_OP:
      u->cx = true;
      for (int i = 0; i < n->noperands; i++) {
        uses_expr(u, n->operands[i].slot);
        uses_expr(u, n->operands[i].row);
        uses_expr(u, n->operands[i].col);
        for (int d = 0; n->operands[i].v && d < 2; d++) {
          uses_expr(u, n->operands[i].v->lo[d]);
          uses_expr(u, n->operands[i].v->n[d]);
        }
      }
      break;
    case IR_WAIT:
      u->cx = true;
      u->known[n->engine] = true;
      uses_expr(u, n->threshold);
      break;
    case IR_SET: uses_expr(u, n->value); break;
    case IR_STORE:
      uses_expr(u, n->index);
      uses_expr(u, n->value);
      break;
    case IR_LOOP:
      u->cx |= loop_checked(n);
      uses_expr(u, n->lo);
      uses_expr(u, n->hi);
      uses_nodes(u, n->body);
      break;
    case IR_BARRIER: u->cx = true; break;
    case IR_IF:
      uses_expr(u, n->cond);
      uses_nodes(u, n->body);
      uses_nodes(u, n->orelse);
      break;
    }
  }
}

static Uses stream_uses(const Program *p, const IrStream *s) {
  Uses u = {0};
  u.param = ARENA_ARRAY(p->arena, bool, p->kernel->nparams + 1);
  u.known = ARENA_ARRAY(p->arena, bool, BFRT_MAX_ENGINES);
  u.var_read = ARENA_ARRAY(p->arena, bool, s->nvars + 1);
  for (int i = 0; i < s->narrays; i++) {
    u.cx = true;
    uses_expr(&u, s->arrays[i].length);
  }
  uses_nodes(&u, s->body);
  return u;
}

/* ---- Integer expressions.
 *
 * Printed so that no two tokens can fuse and nothing is undefined: every
 * operator is a call-shaped macro or function (bf_add, bf_sub, bf_mul wrap
 * around through uint64_t, the language's arithmetic; bfrt_div and
 * bfrt_mod, or bf_mod for a positive constant modulus, floor), and a
 * negative constant is always parenthesized. `- -N` prints as
 * bf_sub(0, bf_sub(0, N)), never as `--N`. */

static void put_const(FILE *out, int64_t v) {
  if (v == INT64_MIN)
    fprintf(out, "(-%" PRId64 " - 1)", INT64_MAX);
  else if (v < 0)
    fprintf(out, "(%" PRId64 ")", v);
  else
    fprintf(out, "%" PRId64, v);
}

static void put_ir_expr(const Emitter *em, const IrExpr *x);
static void put_element(const Emitter *em, int array, const IrExpr *index, int op, int line);

static void put_call(const Emitter *em, const IrExpr *x, const char *fn, bool line) {
  fprintf(em->out, "%s(%s", fn, line ? "bf_cx, " : "");
  put_ir_expr(em, x->a);
  fputs(", ", em->out);
  put_ir_expr(em, x->b);
  if (line) fprintf(em->out, ", %d", x->line);
  fputc(')', em->out);
}

/* A modulo by a positive constant cannot fail: bf_mod, with no check. */
static bool is_const_mod(const IrExpr *x) {
  return x->kind == IX_MOD && x->b->kind == IX_CONST && x->b->value > 0;
}

static bool is_max(const IrExpr *x) { return x->kind == IX_MAX; }
static bool is_trips(const IrExpr *x) { return x->kind == IX_TRIPS; }

/* bf_aA[index]; an index not known to be in range is the slot of op at
 * line, checked first (bfrt_slot) with that op's own error. */
/* A set of entries (IX_ROWS): bfrt_rows_max(bf_cx, bf_aA, ...) loads their
 * max, bfrt_rows_store(bf_cx, bf_aA, value, ...) stores value into each
 * (value NULL: the load). */
static void put_rows(const Emitter *em, int array, const IrExpr *x, const IrExpr *value) {
  fprintf(em->out, "bfrt_rows_%s(bf_cx, bf_a%d, ", value ? "store" : "max", array);
  if (value) {
    put_ir_expr(em, value);
    fputs(", ", em->out);
  }
  fprintf(em->out, "BF_HBM_%s, ", em->tensor_ids[x->id]);
  if (x->rows->gather) fprintf(em->out, "BF_HBM_%s, ", em->tensor_ids[x->rows->gather - 1]);
  else fputs("-1, ", em->out);
  fprintf(em->out, "%d, ", x->rows->axis);
  put_ir_expr(em, x->a);
  fputs(", ", em->out);
  put_ir_expr(em, x->b);
  fprintf(em->out, ", %" PRId64 ", ", x->rows->n);
  put_ir_expr(em, x->c);
  fprintf(em->out, ", %" PRId64 ", ", x->rows->kc);
  put_ir_expr(em, x->rows->ncols);
  fprintf(em->out, ", BFRT_%s, %d)", op_ids[x->rows->op], x->line);
}

static void put_element(const Emitter *em, int array, const IrExpr *index, int op, int line) {
  const IrArray *a = &em->stream->arrays[array];
  if (index->kind == IX_ROWS) {
    put_rows(em, array, index, NULL);
    return;
  }
  fprintf(em->out, "bf_a%d[", array);
  if (a->tile < 0 || ir_index_in_range(index, a->length)) {
    put_ir_expr(em, index);
  } else {
    fprintf(em->out, "bfrt_slot(bf_cx, BFRT_%s, BF_TILE_%s, ", op_ids[op], em->tile_ids[a->tile]);
    put_ir_expr(em, index);
    fprintf(em->out, ", %d)", line);
  }
  fputc(']', em->out);
}

/* A comparison or a logical operator: parenthesized, an int 0 or 1 in C. */
static void put_condition(const Emitter *em, const IrExpr *x, const char *op) {
  fputc('(', em->out);
  put_ir_expr(em, x->a);
  fprintf(em->out, " %s ", op);
  put_ir_expr(em, x->b);
  fputc(')', em->out);
}

static void put_ir_expr(const Emitter *em, const IrExpr *x) {
  for (int i = em->nhoisted - 1; i >= 0; i--)
    if (em->hoisted[i] == x) {
      fprintf(em->out, "bf_t%d", em->ntemps - em->nhoisted + i);
      return;
    }
  switch (x->kind) {
  case IX_CONST: put_const(em->out, x->value); return;
  case IX_PARAM: fputs(em->param_names[x->id], em->out); return;
  case IX_LOOPVAR: fputs(em->loop_names[x->id], em->out); return;
  case IX_VAR: fprintf(em->out, "bf_v%d", x->id); return;
  case IX_LOAD: put_element(em, x->id, x->a, (int)x->value, x->line); return;
  case IX_ADD: put_call(em, x, "bf_add", false); return;
  case IX_SUB: put_call(em, x, "bf_sub", false); return;
  case IX_MUL: put_call(em, x, "bf_mul", false); return;
  case IX_DIV: put_call(em, x, "bfrt_div", true); return;
  case IX_MOD: put_call(em, x, is_const_mod(x) ? "bf_mod" : "bfrt_mod", !is_const_mod(x)); return;
  case IX_MAX: put_call(em, x, "bf_max", false); return;
  case IX_ELEM:
    fprintf(em->out, "bfrt_elem(bf_cx, %d, ", x->id);
    put_ir_expr(em, x->a);
    fputs(", ", em->out);
    put_ir_expr(em, x->b);
    fprintf(em->out, ", %d)", x->line);
    return;
  case IX_ROWS: bug("emit_c: a set of entries outside a load or store");
  case IX_TILE_AT:
    if (x->c->value == 2) fprintf(em->out, "bfrt_slot(bf_cx, BFRT_%s, BF_TILE_%s, ", op_ids[x->value], em->tile_ids[x->id]);
    else if (x->c->value > 2)
      fprintf(em->out, "bfrt_hbm_at(bf_cx, BFRT_%s, BF_HBM_%s, %d, ", op_ids[x->value], em->tensor_ids[x->id],
              (int)x->c->value - 3);
    else
      fprintf(em->out, "bfrt_view_at(bf_cx, BFRT_%s, BF_TILE_%s, %d, ", op_ids[x->value], em->tile_ids[x->id],
              (int)x->c->value);
    put_ir_expr(em, x->a);
    if (x->c->value != 2) fprintf(em->out, ", %" PRId64, x->b->value);
    fprintf(em->out, ", %d)", x->line);
    return;
  case IX_HBM_ROW:
    fprintf(em->out, "bfrt_hbm_row(bf_cx, BFRT_%s, BF_HBM_%s, BF_TILE_%s, ", op_ids[x->value], em->tensor_ids[x->id],
            em->tile_ids[x->c->value]);
    put_ir_expr(em, x->a);
    fputs(", ", em->out);
    put_ir_expr(em, x->b);
    fprintf(em->out, ", %d)", x->line);
    return;
  case IX_LT: put_condition(em, x, "<"); return;
  case IX_LE: put_condition(em, x, "<="); return;
  case IX_GT: put_condition(em, x, ">"); return;
  case IX_GE: put_condition(em, x, ">="); return;
  case IX_EQ: put_condition(em, x, "=="); return;
  case IX_NE: put_condition(em, x, "!="); return;
  case IX_AND: put_condition(em, x, "&&"); return;
  case IX_OR: put_condition(em, x, "||"); return;
  case IX_NOT:
    fputs("!", em->out);
    put_ir_expr(em, x->a);
    return;
  case IX_SELECT:
    fputc('(', em->out);
    put_ir_expr(em, x->a);
    fputs(" ? ", em->out);
    put_ir_expr(em, x->b);
    fputs(" : ", em->out);
    put_ir_expr(em, x->c);
    fputc(')', em->out);
    return;
  case IX_TRIPS: put_call(em, x, "bf_trips", false); return;
  }
  bug("emit_c: unknown IR expression kind %d", x->kind);
}

static bool nodes_use(const IrNode *n, bool (*want)(const IrExpr *));

static bool expr_uses(const IrExpr *x, bool (*want)(const IrExpr *)) {
  return x && (want(x) || expr_uses(x->a, want) || expr_uses(x->b, want) || expr_uses(x->c, want));
}

static bool node_uses(const IrNode *n, bool (*want)(const IrExpr *)) {
  const IrExpr *xs[IR_NODE_EXPRS];
  int k = ir_node_exprs(n, xs);
  for (int i = 0; i < k; i++)
    if (expr_uses(xs[i], want)) return true;
  return (n->kind == IR_LOOP || n->kind == IR_IF) && (nodes_use(n->body, want) || nodes_use(n->orelse, want));
}

static bool nodes_use(const IrNode *n, bool (*want)(const IrExpr *)) {
  for (; n; n = n->next)
    if (node_uses(n, want)) return true;
  return false;
}

static bool nodes_have(const IrNode *n, IrKind kind) {
  for (; n; n = n->next)
    if (n->kind == kind || ((n->kind == IR_LOOP || n->kind == IR_IF) && nodes_have(n->body, kind)) ||
        (n->kind == IR_IF && nodes_have(n->orelse, kind)))
      return true;
  return false;
}

/* bf_forget runs at a barrier of an engine that also waits (put_barrier). */
static bool program_forgets(const IrProgram *ir) {
  for (int e = 0; e < ir->nengines; e++)
    if (nodes_have(ir->streams[e].body, IR_WAIT) && nodes_have(ir->streams[e].body, IR_BARRIER)) return true;
  return false;
}

static bool program_uses(const IrProgram *ir, bool (*want)(const IrExpr *)) {
  for (int e = 0; e < ir->nengines; e++) {
    const IrStream *s = &ir->streams[e];
    for (int i = 0; i < s->narrays; i++)
      if (expr_uses(s->arrays[i].length, want)) return true;
    if (nodes_use(s->body, want)) return true;
  }
  return false;
}

/* ---- Statements. */

static void indent(const Emitter *em) {
  for (int i = 0; i < em->depth; i++) fputs("  ", em->out);
}

static bool is_bookkeeping(const IrNode *n) {
  return n->kind == IR_SET || n->kind == IR_STORE || n->kind == IR_WAIT;
}

static int64_t bookkeeping_charge(const IrNode *n) {
  if (n->kind == IR_WAIT) return n->threshold->kind != IX_CONST;
  return 1;
}

/* At the first node of a run of adjacent bookkeeping nodes, charge the run. */
static void put_charge(const Emitter *em, const IrNode *first) {
  int64_t n = 0;
  for (const IrNode *x = first; x && is_bookkeeping(x); x = x->next) n += bookkeeping_charge(x);
  if (!n) return;
  indent(em);
  fprintf(em->out, "bfrt_bookkeep(bf_cx, %" PRId64 ");\n", n);
}

/* ---- Scratch operations (values kept out of registers, resources.c). */

static const EngineSpill *spill_of(const Emitter *em) {
  const EngineSpill *s = &em->spills[em->stream - em->p->ir->streams];
  return s->any ? s : NULL;
}

/* Scalars in scratch that x reads, each counted once per node: a node
 * loads each such value once. */
static int spilled_reads(const Emitter *em, const IrExpr *x) {
  if (!x) return 0;
  int n = 0;
  if (x->kind == IX_VAR && spill_of(em)->plan.scalar[x->id] && em->spill_stamp[x->id] != em->stamp) {
    em->spill_stamp[x->id] = em->stamp;
    n = 1;
  }
  return n + spilled_reads(em, x->a) + spilled_reads(em, x->b) + spilled_reads(em, x->c);
}

/* What node n costs in scratch operations before it runs: the loads of
 * the scalars in scratch its expressions read, the store of a scalar in
 * scratch it sets, a guard's load, a loop bound's store and first load,
 * before an op the reads of the counters whose last-read count is in
 * scratch, and at a barrier the zeros stored in guards and last-read
 * counts in scratch. A wait's store of its guard and its reads, and each further
 * loop test, are charged where they happen (bf_wait_s, put_loop). */
static int64_t spill_charge(Emitter *em, const IrNode *n) {
  const EngineSpill *s = spill_of(em);
  em->stamp++;
  int64_t c = 0;
  const IrExpr *xs[IR_NODE_EXPRS];
  int k = ir_node_exprs(n, xs);
  for (int i = 0; i < k; i++) c += spilled_reads(em, xs[i]);
  if (n->kind == IR_SET) c += s->plan.scalar[n->var];
  if (n->kind == IR_WAIT) c += s->plan.guards >> n->engine & 1;
  if (n->kind == IR_LOOP && s->plan.bound[n->loop_id]) c += 2;
  if (n->kind == IR_OP) c += s->per_op;
  if (n->kind == IR_BARRIER) /* the restart stores 0 in each guard and last-read count in scratch */
    c += __builtin_popcount((s->plan.guards | s->plan.last_read) & ir_tracks(em->stream)) +
         __builtin_popcount(s->plan.guards & s->plan.last_read & ir_tracks(em->stream));
  return c;
}

static void put_spill(Emitter *em, const IrNode *n) {
  if (!spill_of(em)) return;
  int64_t c = spill_charge(em, n);
  if (!c) return;
  indent(em);
  fprintf(em->out, "bfrt_spill(bf_cx, %" PRId64 "); /* scratch loads and stores */\n", c);
}

/* Whether the wait goes through bf_wait_s, which charges the scratch
 * operations of a wait taken. */
static bool wait_spills(const EngineSpill *s, const IrNode *n) {
  return s && (s->per_wait || (s->plan.guards >> n->engine & 1));
}

/* Why the wait is there, after it on the same line. */
static void put_wait_comment(const Emitter *em, const IrNode *n) {
  const WaitWhy *why = n->why;
  fprintf(em->out, " /* after %s", em->p->target->engines[n->engine].name);
  if (why) {
    fputs(" line", em->out);
    for (int i = 0; i < why->nproducers && i < 4; i++)
      fprintf(em->out, "%s %d", i ? "," : "", why->producer_lines[i]);
    fprintf(em->out, ": %s, %s", why->kind ? why->kind : "?", why->distance ? why->distance : "?");
    if (why->fallback) {
      fputs("; conservative: ", em->out);
      emit_comment_text(em->out, why->fallback, strlen(why->fallback));
    }
  }
  fputs(" */\n", em->out);
}

/* One call per wait: the guard lives in bf_wait, printed once per file, so
 * the threshold is printed and evaluated once and the file stays small. */
static void put_wait(const Emitter *em, const IrNode *n) {
  indent(em);
  const char *e = em->engine_ids[n->engine];
  const EngineSpill *s = spill_of(em);
  fprintf(em->out, "%s(bf_cx, BF_ENGINE_%s, bf_known, ", wait_spills(s, n) ? "bf_wait_s" : "bf_wait", e);
  put_ir_expr(em, n->threshold);
  if (wait_spills(s, n))
    fprintf(em->out, ", %d, %d);", n->line, s->per_wait + (int)(s->plan.guards >> n->engine & 1));
  else
    fprintf(em->out, ", %d);", n->line);
  put_wait_comment(em, n);
}

static void put_float(FILE *out, float f) {
  if (isnan(f)) {
    fputs("(0.0f / 0.0f)", out);
    return;
  }
  if (isinf(f)) {
    fprintf(out, "(%s1.0f / 0.0f)", f < 0 ? "-" : "");
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%.9g", (double)f);
  fputs(buf, out);
  if (!strpbrk(buf, ".e")) fputs(".0", out);
  fputc('f', out);
}

/* The operand kinds of an op as letters, t(ile), v(iew of a tile), h(bm), f(loat): its
 * call goes through bf_op_LETTERS, which builds the bfrt_arg array in its
 * own frame. A compound literal per op in the engine function instead
 * would take stack space per op (tcc does not reuse it): 150,000 ops
 * overflowed an engine thread's stack. */
static void operand_letters(const IrNode *n, char letters[8]) {
  int k = 0;
  for (int i = 0; i < n->noperands && k < 7; i++)
    letters[k++] = n->operands[i].kind == OPND_TILE ? (n->operands[i].v ? 'v' : 't')
                   : n->operands[i].kind == OPND_HBM ? (n->operands[i].gather ? 'g' : n->operands[i].v ? 's' : 'h')
                                                     : 'f';
  letters[k] = 0;
}

static void put_op_helper(FILE *out, const char *letters) {
  static const char *const arg[] = {"BFRT_TILE(t%d, s%d)", "BFRT_HBM(h%d, r%d, c%d)", "BFRT_IMM(f%d)",
                                    "BFRT_VIEW(t%d, s%d, r%d, rn%d, c%d, cn%d)", "BFRT_SLICE(h%d, r%d, rn%d, c%d, cn%d)",
                                    "BFRT_GATHER(h%d, rn%d, c%d, cn%d, gi%d, gr%d, gc%d, ga%d)"};
  int n = (int)strlen(letters);
  fprintf(out, "\nstatic void bf_op_%s(bfrt_ctx *cx, int op, int line", letters);
  for (int i = 0; i < n; i++) {
    if (letters[i] == 't') fprintf(out, ", int t%d, int64_t s%d", i, i);
    if (letters[i] == 'h') fprintf(out, ", int h%d, int64_t r%d, int64_t c%d", i, i, i);
    if (letters[i] == 'f') fprintf(out, ", float f%d", i);
    if (letters[i] == 'v')
      fprintf(out, ", int t%d, int64_t s%d, int64_t r%d, int64_t rn%d, int64_t c%d, int64_t cn%d", i, i, i, i, i, i);
    if (letters[i] == 's') fprintf(out, ", int h%d, int64_t r%d, int64_t rn%d, int64_t c%d, int64_t cn%d", i, i, i, i, i);
    if (letters[i] == 'g')
      fprintf(out, ", int h%d, int64_t rn%d, int64_t c%d, int64_t cn%d, int gi%d, int64_t gr%d, int64_t gc%d, int ga%d", i, i,
              i, i, i, i, i, i);
  }
  fprintf(out, ") {\n  const bfrt_arg args[%d] = {", n);
  for (int i = 0; i < n; i++) {
    int k = letters[i] == 't' ? 0 : letters[i] == 'h' ? 1 : letters[i] == 'f' ? 2 : letters[i] == 'v' ? 3 : letters[i] == 's' ? 4 : 5;
    if (i) fputs(", ", out);
    fprintf(out, arg[k], i, i, i, i, i, i, i, i);
  }
  fprintf(out, "};\n  bfrt_op(cx, op, line, %d, args);\n}\n", n);
}

static void collect_op_shapes(const IrNode *n, char (*seen)[8], int *nseen, int cap) {
  for (; n; n = n->next) {
    if (n->kind == IR_LOOP || n->kind == IR_IF) collect_op_shapes(n->body, seen, nseen, cap);
    if (n->kind == IR_IF) collect_op_shapes(n->orelse, seen, nseen, cap);
    if (n->kind != IR_OP) continue;
    char letters[8];
    operand_letters(n, letters);
    int i = 0;
    while (i < *nseen && strcmp(seen[i], letters)) i++;
    if (i == *nseen && *nseen < cap) strcpy(seen[(*nseen)++], letters);
  }
}

/* One bf_op_LETTERS per operand shape the kernel's ops use. */
static void put_op_helpers(const Program *p, FILE *out) {
  enum { CAP = 64 };
  char seen[CAP][8];
  int nseen = 0;
  for (int e = 0; e < p->ir->nengines; e++) collect_op_shapes(p->ir->streams[e].body, seen, &nseen, CAP);
  if (nseen == CAP) bug("emit_c: more than %d operand shapes", CAP);
  for (int i = 0; i < nseen; i++) put_op_helper(out, seen[i]);
}

/* A view's or slice's start and extent along dimension d (a ragged one's
 * computed). */
static void put_extent(const Emitter *em, const IrOperand *o, int d) {
  put_ir_expr(em, o->v->lo[d]);
  fputs(", ", em->out);
  if (o->v->n[d]) put_ir_expr(em, o->v->n[d]);
  else fprintf(em->out, "%" PRId64, o->v->ext[d]);
}

static void put_operand(const Emitter *em, const IrOperand *o) {
  switch (o->kind) {
  case OPND_TILE:
    fprintf(em->out, ", BF_TILE_%s, ", em->tile_ids[o->decl]);
    put_ir_expr(em, o->slot);
    for (int d = 0; o->v && d < 2; d++) {
      fputs(", ", em->out);
      put_extent(em, o, d);
    }
    return;
  case OPND_HBM:
    fprintf(em->out, ", BF_HBM_%s, ", em->tensor_ids[o->decl]);
    if (o->gather) { /* rows by index: n, the columns, then the index run */
      fprintf(em->out, "%" PRId64 ", ", o->v->ext[0]);
      put_extent(em, o, 1);
      fprintf(em->out, ", BF_HBM_%s, ", em->tensor_ids[o->gather - 1]);
      put_ir_expr(em, o->row);
      fputs(", ", em->out);
      put_ir_expr(em, o->col);
      fprintf(em->out, ", %d", o->gaxis);
      return;
    }
    for (int d = 0; o->v && d < 2; d++) {
      if (d) fputs(", ", em->out);
      put_extent(em, o, d);
    }
    if (o->v) return;
    put_ir_expr(em, o->row);
    fputs(", ", em->out);
    put_ir_expr(em, o->col);
    return;
  case OPND_IMM:
    fputs(", ", em->out);
    put_float(em->out, o->imm);
    return;
  case OPND_NAME: break;
  }
  bug("emit_c: unresolved operand in the IR");
}

static void put_op(const Emitter *em, const IrNode *n) {
  indent(em);
  fprintf(em->out, "/* line %d: ", n->line);
  if (n->instr) {
    Span s = n->instr->span;
    if (s.end > s.begin && s.end <= em->p->src.len)
      emit_comment_text(em->out, em->p->src.text + s.begin, s.end - s.begin);
  }
  fputs(" */\n", em->out);
  indent(em);
  char letters[8];
  operand_letters(n, letters);
  fprintf(em->out, "bf_op_%s(bf_cx, BFRT_%s, %d", letters, op_ids[n->op], n->line);
  for (int i = 0; i < n->noperands; i++) put_operand(em, &n->operands[i]);
  fputs(");\n", em->out);
}

static void put_nodes(Emitter *em, const IrNode *n, const Uses *u);

/* ---- Hoisting. Positions in a loop body share their base, entry + (i -
 * lo) * K, by pointer (ir.c keeps them `base + k`), and every store and
 * wait of the iteration would print it again. A subexpression used at
 * least twice in the body's own nodes, invariant in the iteration (no
 * scalar the body sets, no array load) and unable to fail (no division
 * but by a positive constant) is printed once, at the top of the body, as
 * `const int64_t bf_tK`. It changes no value and no bookkeeping charge
 * (ir.h counts IR nodes, not arithmetic); it keeps the file and tcc's
 * work smaller. */

static void mark_sets(Emitter *em, const IrNode *n, bool value) {
  for (; n; n = n->next) {
    if (n->kind == IR_SET) em->var_set[n->var] = value;
    if (n->kind == IR_LOOP || n->kind == IR_IF) mark_sets(em, n->body, value);
    if (n->kind == IR_IF) mark_sets(em, n->orelse, value);
  }
}

static bool hoistable(const Emitter *em, const IrExpr *x) {
  if (!x) return true;
  switch (x->kind) {
  case IX_VAR: return !em->var_set[x->id];
  case IX_LOAD:
  case IX_ELEM: /* a device read costs a read, and may be out of bounds where unused */
  case IX_HBM_ROW: /* may stop the kernel where unused */
  case IX_TILE_AT:
  case IX_ROWS: /* not a value */
  case IX_SELECT:
  case IX_AND:
  case IX_OR: return false; /* evaluated lazily: hoisting would evaluate the side not taken */
  case IX_DIV: return x->b->kind == IX_CONST && x->b->value > 0 && hoistable(em, x->a);
  case IX_MOD: return is_const_mod(x) && hoistable(em, x->a);
  default: return hoistable(em, x->a) && hoistable(em, x->b);
  }
}

typedef struct Candidates {
  const IrExpr **x;
  int n, cap;
} Candidates;

static void add_candidate(const Program *p, Candidates *c, const IrExpr *x) {
  if (!x || x->size < 3) return;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 32;
    const IrExpr **grown = ARENA_ARRAY(p->arena, const IrExpr *, c->cap);
    if (c->n) memcpy(grown, c->x, sizeof *grown * (size_t)c->n);
    c->x = grown;
  }
  c->x[c->n++] = x;
}

static bool is_hoisted(const Emitter *em, const IrExpr *x) {
  for (int i = 0; i < em->nhoisted; i++)
    if (em->hoisted[i] == x) return true;
  return false;
}

/* x itself, the bases of its `base + k` nodes and the indices of its loads.
 * An enclosing loop's temporary is printed by name, so nothing inside it
 * counts as a use: hoisting it again would declare an unused variable. */
static void gather(const Emitter *em, Candidates *c, const IrExpr *x, bool top) {
  const Program *p = em->p;
  if (!x || is_hoisted(em, x)) return;
  if (top) add_candidate(p, c, x);
  if (x->kind == IX_ADD && x->b->kind == IX_CONST) add_candidate(p, c, x->a);
  if (x->kind == IX_LOAD) add_candidate(p, c, x->a);
  gather(em, c, x->a, false);
  /* the lazy operands of ? : && || are evaluated only when chosen: not hoisted */
  if (x->kind != IX_SELECT && x->kind != IX_AND && x->kind != IX_OR) gather(em, c, x->b, false);
}

static int by_pointer_then_size(const void *a, const void *b) {
  const IrExpr *x = *(const IrExpr *const *)a, *y = *(const IrExpr *const *)b;
  if (x != y) return (uintptr_t)x < (uintptr_t)y ? -1 : 1;
  return 0;
}

static int by_size(const void *a, const void *b) {
  const IrExpr *x = *(const IrExpr *const *)a, *y = *(const IrExpr *const *)b;
  return (x->size > y->size) - (x->size < y->size);
}

/* Whether an enclosing loop already hoisted x (it prints as that name). */
static bool hoisted_outside(const Emitter *em, const IrExpr *x) {
  for (int i = 0; i < em->nhoisted; i++)
    if (em->hoisted[i] == x) return true;
  return false;
}

/* Declare the body's temporaries; returns how many (popped after the body).
 * An expression an enclosing loop hoisted is a name already: hoisting it
 * again would declare an unused copy, which gcc -Werror rejects. */
static int hoist_loop(Emitter *em, const IrNode *body) {
  const Program *p = em->p;
  Candidates c = {0};
  for (const IrNode *n = body; n; n = n->next) {
    if (n->kind == IR_IF) continue; /* its condition is not a candidate */
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++) gather(em, &c, xs[i], true);
  }
  if (c.n < 2) return 0;
  mark_sets(em, body, true);
  qsort(c.x, (size_t)c.n, sizeof *c.x, by_pointer_then_size);
  int chosen = 0;
  for (int i = 0; i < c.n;) {
    int j = i;
    while (j < c.n && c.x[j] == c.x[i]) j++;
    if ((int64_t)c.x[i]->size * (j - i - 1) >= 8 && hoistable(em, c.x[i]) && !hoisted_outside(em, c.x[i]))
      c.x[chosen++] = c.x[i];
    i = j;
  }
  mark_sets(em, body, false);
  qsort(c.x, (size_t)chosen, sizeof *c.x, by_size); /* inner ones first: the outer print them by name */
  for (int i = 0; i < chosen; i++) {
    indent(em);
    fprintf(em->out, "const int64_t bf_t%d = ", em->ntemps);
    put_ir_expr(em, c.x[i]);
    fputs(";\n", em->out);
    if (em->nhoisted == em->hoist_cap) {
      em->hoist_cap = em->hoist_cap ? 2 * em->hoist_cap : 16;
      const IrExpr **grown = ARENA_ARRAY(p->arena, const IrExpr *, em->hoist_cap);
      if (em->nhoisted) memcpy(grown, em->hoisted, sizeof *grown * (size_t)em->nhoisted);
      em->hoisted = grown;
    }
    em->hoisted[em->nhoisted++] = c.x[i];
    em->ntemps++;
  }
  return chosen;
}

static void put_loop(Emitter *em, const IrNode *n, const Uses *u) {
  const char *v = em->loop_names[n->loop_id];
  indent(em);
  fprintf(em->out, "for (int64_t %s = ", v);
  put_ir_expr(em, n->lo);
  fprintf(em->out, ", bf_end%d = ", n->loop_id);
  if (loop_checked(n)) fprintf(em->out, "bfrt_loop(bf_cx, %s, ", v);
  put_ir_expr(em, n->hi);
  if (loop_checked(n)) fprintf(em->out, ", %d)", n->line);
  fprintf(em->out, "; %s < bf_end%d; %s++) {\n", v, n->loop_id, v);
  em->depth++;
  int temps = hoist_loop(em, n->body);
  put_nodes(em, n->body, u);
  if (spill_of(em) && spill_of(em)->plan.bound[n->loop_id]) {
    indent(em);
    fputs("bfrt_spill(bf_cx, 1); /* the next test loads the bound from scratch */\n", em->out);
  }
  em->nhoisted -= temps;
  em->ntemps -= temps;
  em->depth--;
  indent(em);
  fputs("}\n", em->out);
}

/* if (cond) { body } else { orelse }: the condition reads only parameters
 * and loop variables, so every engine takes the same branch. */
static void put_if(Emitter *em, const IrNode *n, const Uses *u) {
  indent(em);
  fputs("if (", em->out);
  put_ir_expr(em, n->cond);
  fprintf(em->out, ") { /* line %d */\n", n->line);
  em->depth++;
  put_nodes(em, n->body, u);
  em->depth--;
  if (n->orelse) {
    indent(em);
    fputs("} else {\n", em->out);
    em->depth++;
    put_nodes(em, n->orelse, u);
    em->depth--;
  }
  indent(em);
  fputs("}\n", em->out);
}

static bool any_known(const Emitter *em, const Uses *u) {
  for (int e = 0; e < em->p->target->nengines; e++)
    if (u->known[e]) return true;
  return false;
}

static void put_barrier(const Emitter *em, const IrNode *n, const Uses *u) {
  indent(em);
  fprintf(em->out, "bfrt_barrier(bf_cx, %d); /* counters restart from 0 */\n", n->line);
  if (!any_known(em, u)) return;
  indent(em);
  fputs("bf_forget(bf_known);\n", em->out);
}

static void put_nodes(Emitter *em, const IrNode *n, const Uses *u) {
  const IrNode *prev = NULL;
  for (; n; prev = n, n = n->next) {
    if (is_bookkeeping(n) && !(prev && is_bookkeeping(prev))) put_charge(em, n);
    put_spill(em, n);
    switch (n->kind) {
    case IR_OP: put_op(em, n); break;
    case IR_WAIT: put_wait(em, n); break;
    case IR_SET:
      indent(em);
      fprintf(em->out, "bf_v%d = ", n->var);
      put_ir_expr(em, n->value);
      fputs(";\n", em->out);
      break;
    case IR_STORE:
      indent(em);
      if (n->index->kind == IX_ROWS) {
        put_rows(em, n->array, n->index, n->value);
        fputs(";\n", em->out);
        break;
      }
      put_element(em, n->array, n->index, n->op, n->line);
      fputs(" = ", em->out);
      put_ir_expr(em, n->value);
      fputs(";\n", em->out);
      break;
    case IR_LOOP: put_loop(em, n, u); break;
    case IR_BARRIER: put_barrier(em, n, u); break;
    case IR_IF: put_if(em, n, u); break;
    }
  }
}

/* ---- One function per engine. */

static void put_locals(Emitter *em, const Uses *u) {
  const Program *p = em->p;
  const IrStream *s = em->stream;
  for (int i = 0; i < p->kernel->nparams; i++)
    if (u->param[i])
      fprintf(em->out, "  const int64_t %s = bf_params[%d];\n", em->param_names[i], i);
  if (any_known(em, u))
    fprintf(em->out, "  int64_t bf_known[%d] = {0}; /* by engine: highest threshold waited for */\n",
            p->target->nengines);
  for (int i = 0; i < s->nvars; i++) {
    fprintf(em->out, "  int64_t bf_v%d = 0; /* ", i);
    const char *name = s->var_names ? s->var_names[i] : NULL;
    if (name) emit_comment_text(em->out, name, strlen(name));
    fputs(" */\n", em->out);
    if (!u->var_read[i]) fprintf(em->out, "  (void)bf_v%d;\n", i);
  }
  for (int i = 0; i < s->narrays; i++) {
    fprintf(em->out, "  int64_t *bf_a%d = bfrt_scratch(bf_cx, ", i);
    put_ir_expr(em, s->arrays[i].length);
    fputs("); /* ", em->out);
    if (s->arrays[i].name) emit_comment_text(em->out, s->arrays[i].name, strlen(s->arrays[i].name));
    fputs(" */\n", em->out);
  }
  bool any_param = false;
  for (int i = 0; i < p->kernel->nparams; i++) any_param |= u->param[i];
  if (!any_param) fputs("  (void)bf_params;\n", em->out);
  if (!u->cx) fputs("  (void)bf_cx;\n", em->out);
}

static void put_engine(Emitter *em, int e) {
  const Engine *eng = &em->p->target->engines[e];
  em->stream = &em->p->ir->streams[e];
  em->var_set = ARENA_ARRAY(em->p->arena, bool, em->stream->nvars + 1);
  Uses u = stream_uses(em->p, em->stream);
  fprintf(em->out, "\n/* Engine %s. */\n", eng->name);
  fprintf(em->out, "static void bf_engine_%s(bfrt_ctx *bf_cx, const int64_t *bf_params) {\n",
          sanitize_id(em->p->arena, eng->name, e));
  put_locals(em, &u);
  em->depth = 1;
  put_nodes(em, em->stream->body, &u);
  fputs("}\n", em->out);
}

/* ---- Tensor shapes, from the AST's shape expressions over parameters. */

static void put_ast_expr(const Emitter *em, const Expr *x) {
  static const char *const fn[] = {[EX_ADD] = "bf_add", [EX_SUB] = "bf_sub", [EX_MUL] = "bf_mul",
                                   [EX_DIV] = "bf_shape_div", [EX_MOD] = "bf_shape_mod"};
  switch (x->kind) {
  case EX_INT: put_const(em->out, x->value); return;
  case EX_ELEM: bug("emit_c: tensor shape reads device integer '%s'", x->name);
  case EX_NAME:
    if (x->sym != SYM_PARAM) bug("emit_c: tensor shape uses a non-parameter '%s'", x->name);
    fputs(em->param_names[x->index], em->out);
    return;
  case EX_NEG:
    fputs("bf_sub(0, ", em->out);
    put_ast_expr(em, x->lhs);
    fputc(')', em->out);
    return;
  case EX_ADD:
  case EX_SUB:
  case EX_MUL:
  case EX_DIV:
  case EX_MOD:
    fprintf(em->out, "%s(", fn[x->kind]);
    put_ast_expr(em, x->lhs);
    fputs(", ", em->out);
    put_ast_expr(em, x->rhs);
    if (x->kind == EX_DIV || x->kind == EX_MOD) fprintf(em->out, ", %d, &bf_bad", line_of(em->p, x->span));
    fputc(')', em->out);
    return;
  case EX_FLOAT: bug("emit_c: a real number in a tensor shape");
  case EX_MIN:
  case EX_MAX: bug("emit_c: min or max in a tensor shape");
  }
  bug("emit_c: unknown expression kind %d", x->kind);
}

static bool ast_expr_has(const Expr *x, ExprKind kind) {
  return x && (x->kind == kind || ast_expr_has(x->lhs, kind) || ast_expr_has(x->rhs, kind));
}

static void ast_expr_params(const Expr *x, bool *param) {
  if (!x) return;
  if (x->kind == EX_NAME && x->sym == SYM_PARAM) param[x->index] = true;
  ast_expr_params(x->lhs, param);
  ast_expr_params(x->rhs, param);
}

/* Floor division and modulo for tensor shapes, emitted only when used; a
 * zero divisor records its source line in *bad. Division by -1 is
 * negation, wrapping (INT64_MIN / -1 is INT64_MIN), as everywhere. */
static const char shape_div[] =
    "\nstatic int64_t bf_shape_div(int64_t a, int64_t b, int line, int *bad) {\n"
    "  if (b == 0) {\n"
    "    if (!*bad) *bad = line;\n"
    "    return 0;\n"
    "  }\n"
    "  if (b == -1) return bf_sub(0, a);\n"
    "  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));\n"
    "}\n";

static const char shape_mod[] =
    "\nstatic int64_t bf_shape_mod(int64_t a, int64_t b, int line, int *bad) {\n"
    "  if (b == 0) {\n"
    "    if (!*bad) *bad = line;\n"
    "    return 0;\n"
    "  }\n"
    "  if (b == -1) return 0;\n"
    "  return a % b + ((a % b != 0) && ((a < 0) != (b < 0))) * b;\n"
    "}\n";

static void put_tensor_shape(const Emitter *em) {
  const Kernel *k = em->p->kernel;
  bool div = false, mod = false;
  bool *param = ARENA_ARRAY(em->p->arena, bool, k->nparams + 1);
  for (int t = 0; t < k->ntensors; t++) {
    div |= ast_expr_has(k->tensors[t].rows, EX_DIV) || ast_expr_has(k->tensors[t].cols, EX_DIV);
    mod |= ast_expr_has(k->tensors[t].rows, EX_MOD) || ast_expr_has(k->tensors[t].cols, EX_MOD);
    ast_expr_params(k->tensors[t].rows, param);
    ast_expr_params(k->tensors[t].cols, param);
  }
  if (div) fputs(shape_div, em->out);
  if (mod) fputs(shape_mod, em->out);
  fputs("\n/* Shape of tensor bf_tensor for these parameters; 0, or the source line\n"
        " * of a division by zero. */\n"
        "static int bf_tensor_shape(const int64_t *bf_params, int bf_tensor, int64_t bf_shape[2]) {\n",
        em->out);
  bool any_param = false;
  for (int i = 0; i < k->nparams; i++)
    if (param[i]) {
      any_param = true;
      fprintf(em->out, "  const int64_t %s = bf_params[%d];\n", em->param_names[i], i);
    }
  if (!any_param) fputs("  (void)bf_params;\n", em->out);
  fprintf(em->out, "  int bf_bad = 0;\n  switch (bf_tensor) {\n");
  for (int t = 0; t < k->ntensors; t++) {
    const Tensor *x = &k->tensors[t];
    fprintf(em->out, "  case BF_HBM_%s:\n    bf_shape[0] = ", sanitize_id(em->p->arena, x->name, t));
    put_ast_expr(em, x->rows);
    fputs(";\n    bf_shape[1] = ", em->out);
    put_ast_expr(em, x->cols);
    fputs(";\n    break;\n", em->out);
  }
  fputs("  default:\n    bf_shape[0] = bf_shape[1] = 0;\n    break;\n  }\n  return bf_bad;\n}\n",
        em->out);
}

/* ---- The file. */

static void put_header(const Emitter *em) {
  const Program *p = em->p;
  const Kernel *k = p->kernel;
  fputs("/* Generated by bfsync " BFSYNC_VERSION " -- do not edit.\n *\n", em->out);
  fprintf(em->out, " * kernel: %s(", k->name);
  for (int i = 0; i < k->nparams; i++) fprintf(em->out, "%s%s", i ? ", " : "", k->params[i].name);
  fprintf(em->out, ")\n * sync:   %s\n * source: ", sync_name(p->ir->sync));
  emit_comment_text(em->out, p->src.path, strlen(p->src.path));
  fprintf(em->out, "\n * target: %s\n *\n", p->target->name);
  fputs(" * One function per engine runs that engine's instruction stream in order.\n"
        " * Every op, wait and barrier goes through the bfrt runtime (bfrt_kernel.h,\n"
        " * see docs/runtime.md); the one external symbol is the kernel's descriptor,\n"
        " * named after the kernel and the sync mode. */\n"
        "#include <stdint.h>\n\n#include \"bfrt_kernel.h\"\n",
        em->out);
}

static void put_enum(const Emitter *em, const char *what, const char *prefix, int n,
                     const char *(*name)(const Program *, int)) {
  if (!n) return;
  fprintf(em->out, "\n/* %s */\nenum {", what);
  for (int i = 0; i < n; i++)
    fprintf(em->out, "%s\n  %s%s = %d", i ? "," : "", prefix,
            sanitize_id(em->p->arena, name(em->p, i), i), i);
  fputs("\n};\n", em->out);
}

static const char *engine_name(const Program *p, int i) { return p->target->engines[i].name; }
static const char *tile_name(const Program *p, int i) { return p->kernel->tiles[i].name; }
static const char *tensor_name(const Program *p, int i) { return p->kernel->tensors[i].name; }

static void put_string_table(const Emitter *em, const char *table, int n,
                             const char *(*name)(const Program *, int)) {
  fprintf(em->out, "static const char *const %s[%d] = {", table, n ? n : 1);
  for (int i = 0; i < n; i++) fprintf(em->out, "%s\"%s\"", i ? ", " : "", name(em->p, i));
  fputs(n ? "};\n" : "0};\n", em->out);
}

static const char *param_name(const Program *p, int i) { return p->kernel->params[i].name; }

static void put_descriptor(const Emitter *em) {
  const Program *p = em->p;
  const Kernel *k = p->kernel;
  int ne = p->target->nengines;
  fputs("\n/* ---- The kernel descriptor. */\n", em->out);
  put_string_table(em, "bf_param_names", k->nparams, param_name);
  put_string_table(em, "bf_engine_names", ne, engine_name);
  fprintf(em->out, "static const int bf_engine_kinds[%d] = {", ne);
  for (int e = 0; e < ne; e++)
    fprintf(em->out, "%sBFRT_KIND_%s", e ? ", " : "", kind_ids[p->target->engines[e].kind]);
  fprintf(em->out, "};\nstatic void (*const bf_entry[%d])(bfrt_ctx *, const int64_t *) = {", ne);
  for (int e = 0; e < ne; e++)
    fprintf(em->out, "%sbf_engine_%s", e ? ", " : "", sanitize_id(p->arena, p->target->engines[e].name, e));
  static const char *const dtype_names[ELEM_NTYPES] = {"BFRT_DTYPE_F32",   "BFRT_DTYPE_I32",   "BFRT_DTYPE_BF16",
                                                       "BFRT_DTYPE_FP8E4", "BFRT_DTYPE_FP8E5", "BFRT_DTYPE_FP16"};
  fprintf(em->out, "};\nstatic const bfrt_tile_desc bf_tiles[%d] = {", k->ntiles ? k->ntiles : 1);
  for (int i = 0; i < k->ntiles; i++) {
    const Tile *t = &k->tiles[i];
    fprintf(em->out, "%s\n  {\"%s\", %" PRId64 ", %" PRId64 ", %" PRId64 ", %s}", i ? "," : "", t->name,
            t->slots, t->rows, t->cols, dtype_names[t->type]);
  }
  fputs(k->ntiles ? "\n};\n" : "{0, 0, 0, 0, 0}};\n", em->out);
  fprintf(em->out, "static const bfrt_tensor_desc bf_tensors[%d] = {", k->ntensors ? k->ntensors : 1);
  static const char *const io_names[] = {"BFRT_IN", "BFRT_OUT", "BFRT_INOUT"};
  for (int i = 0; i < k->ntensors; i++)
    fprintf(em->out, "%s\n  {\"%s\", %s, %s}", i ? "," : "", k->tensors[i].name,
            io_names[k->tensors[i].io], dtype_names[k->tensors[i].type]);
  fputs(k->ntensors ? "\n};\n" : "{0, 0, 0}};\n", em->out);
  fprintf(em->out, "static const uint32_t bf_tracks[%d] = {", ne);
  for (int e = 0; e < ne; e++) fprintf(em->out, "%s0x%" PRIx32, e ? ", " : "", ir_tracks(&p->ir->streams[e]));
  fputs("};\n", em->out);
  fprintf(em->out,
          "\nconst bfrt_kernel %s = {\n"
          "  \"%s\", %d, bf_param_names, %d, bf_engine_names, bf_engine_kinds, bf_entry,\n"
          "  %d, bf_tiles, %d, bf_tensors, bf_tensor_shape, %d, bf_tracks};\n",
          emit_c_symbol(p), k->name, k->nparams, ne, k->ntiles, k->ntensors, p->target->counter_bits);
}

const char *emit_c_symbol(const Program *p) {
  return arena_printf(p->arena, "bfk_%s_%s", p->kernel->name, sync_ident(p->ir->sync));
}

static const char **loop_c_names(const Program *p) {
  const Kernel *k = p->kernel;
  const char **names = ARENA_ARRAY(p->arena, const char *, k->nloops + 1);
  for (int i = 0; i < k->nloops; i++) names[i] = c_name(p->arena, k->loops[i]->var, "loop", i);
  return names;
}

static const char **param_c_names(const Program *p) {
  const Kernel *k = p->kernel;
  const char **names = ARENA_ARRAY(p->arena, const char *, k->nparams + 1);
  for (int i = 0; i < k->nparams; i++) names[i] = c_name(p->arena, k->params[i].name, "param", i);
  return names;
}

static const char **sanitized_ids(const Program *p, int n,
                                  const char *(*name)(const Program *, int)) {
  const char **ids = ARENA_ARRAY(p->arena, const char *, n + 1);
  for (int i = 0; i < n; i++) ids[i] = sanitize_id(p->arena, name(p, i), i);
  return ids;
}

/* bf_wait, the guarded wait of ir.h. A threshold is compared with the
 * whole count, which the runtime extends from the counter's low bits
 * (docs/algorithm.md, section 7), so one wait suffices at any width. */
static void put_guarded_wait(FILE *out) {
  fputs("\n/* Wait until engine's counter reaches t, unless a wait for as much is done. */\n"
        "static void bf_wait(bfrt_ctx *cx, int engine, int64_t *known, int64_t t, int line) {\n"
        "  if (t > known[engine]) {\n"
        "    bfrt_wait(cx, engine, t, line);\n"
        "    known[engine] = t;\n"
        "  }\n"
        "}\n",
        out);
}

/* bf_wait_s: bf_wait for an engine that keeps values in scratch; a wait
 * taken charges `spills` scratch operations (its reads' last-read counts,
 * the guard's store). */
static void put_spilled_wait(FILE *out) {
  fputs("\n/* bf_wait, charging the scratch operations of a wait taken. */\n"
        "static void bf_wait_s(bfrt_ctx *cx, int engine, int64_t *known, int64_t t, int line, int spills) {\n"
        "  if (t > known[engine]) {\n"
        "    bfrt_spill(cx, spills);\n"
        "    bfrt_wait(cx, engine, t, line);\n"
        "    known[engine] = t;\n"
        "  }\n"
        "}\n",
        out);
}

/* Which waits use which helper (bf_wait, bf_wait_s): static helpers are
 * printed only where used. */
static void wait_helpers(const IrNode *n, const EngineSpill *s, bool *plain, bool *spilled) {
  for (; n; n = n->next) {
    if (n->kind == IR_WAIT) *(wait_spills(s, n) ? spilled : plain) = true;
    wait_helpers(n->body, s, plain, spilled);
    wait_helpers(n->orelse, s, plain, spilled);
  }
}

/* What each engine keeps in scratch: only a target that sets `registers`
 * makes resources.c spill. */
static const EngineSpill *plan_spills(const Program *p) {
  EngineSpill *s = ARENA_ARRAY(p->arena, EngineSpill, p->ir->nengines);
  bool limited = false;
  for (int k = 0; k < BFRT_NKINDS; k++) limited |= p->target->registers[k] != 0;
  if (!limited) return s;
  const EngineResources *r = resources_plan(p);
  for (int e = 0; e < p->ir->nengines; e++) {
    if (!r[e].spilled) continue;
    int reads = 2 * __builtin_popcount(r[e].plan.last_read & ir_tracks(&p->ir->streams[e]));
    s[e] = (EngineSpill){true, r[e].plan, reads, reads};
  }
  for (int e = 0; e < p->ir->nengines; e++) {
    int loads = r[e].producer_loads;
    if (!loads) continue;
    if (!s[e].any) {
      s[e].any = true;
      s[e].plan.scalar = ARENA_ARRAY(p->arena, bool, p->ir->streams[e].nvars + 1);
      s[e].plan.bound = ARENA_ARRAY(p->arena, bool, p->kernel->nloops + 1);
    }
    s[e].per_op += loads;
  }
  return s;
}

void emit_c(const Program *p, FILE *out) {
  if (!p->ir || !p->kernel) bug("emit_c: no IR to print");
  if (p->ir->nengines != p->target->nengines)
    bug("emit_c: IR has %d streams for %d engines", p->ir->nengines, p->target->nengines);
  Emitter em = {p, out, loop_c_names(p), param_c_names(p), NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL, 0};
  em.engine_ids = sanitized_ids(p, p->target->nengines, engine_name);
  em.tile_ids = sanitized_ids(p, p->kernel->ntiles, tile_name);
  em.tensor_ids = sanitized_ids(p, p->kernel->ntensors, tensor_name);
  put_header(&em);
  put_enum(&em, "Engines: the index of each engine's counter.", "BF_ENGINE_", p->target->nengines,
           engine_name);
  put_enum(&em, "Tiles (on-chip).", "BF_TILE_", p->kernel->ntiles, tile_name);
  put_enum(&em, "Tensors (hbm).", "BF_HBM_", p->kernel->ntensors, tensor_name);
  fputs("\n/* The language's integer arithmetic: 64 bits, wrapping around (never\n"
        " * undefined behaviour). */\n"
        "#define bf_add(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))\n"
        "#define bf_sub(a, b) ((int64_t)((uint64_t)(a) - (uint64_t)(b)))\n"
        "#define bf_mul(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))\n",
        out);
  if (program_uses(p->ir, is_max))
    fputs("\nstatic int64_t bf_max(int64_t a, int64_t b) { return a > b ? a : b; }\n", out);
  if (program_uses(p->ir, is_trips))
    fputs("\n/* Iterations of for v in lo .. hi (below 2^63: bfrt_loop stops longer loops). */\n"
          "static int64_t bf_trips(int64_t lo, int64_t hi) {\n"
          "  return hi > lo ? (int64_t)((uint64_t)hi - (uint64_t)lo) : 0;\n"
          "}\n",
          out);
  if (program_uses(p->ir, is_const_mod))
    fputs("\n/* Floor modulo by a positive constant. */\n"
          "static int64_t bf_mod(int64_t a, int64_t b) { return a % b < 0 ? a % b + b : a % b; }\n",
          out);
  em.spills = plan_spills(p);
  int nvars = 1;
  for (int e = 0; e < p->ir->nengines; e++) nvars = nvars > p->ir->streams[e].nvars ? nvars : p->ir->streams[e].nvars;
  em.spill_stamp = ARENA_ARRAY(p->arena, int, nvars);
  bool plain = false, spilled = false;
  for (int e = 0; e < p->ir->nengines; e++)
    wait_helpers(p->ir->streams[e].body, em.spills[e].any ? &em.spills[e] : NULL, &plain, &spilled);
  if (plain) put_guarded_wait(out);
  if (spilled) put_spilled_wait(out);
  if (program_forgets(p->ir))
    fprintf(out, "\n/* After a barrier every counter restarts from 0. */\n"
            "static void bf_forget(int64_t *known) {\n"
            "  for (int e = 0; e < %d; e++) known[e] = 0;\n"
            "}\n",
            p->target->nengines);
  put_op_helpers(p, out);
  for (int e = 0; e < p->ir->nengines; e++) put_engine(&em, e);
  put_tensor_shape(&em);
  put_descriptor(&em);
}

char *emit_c_string(Program *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) bug("emit_c: out of memory");
  emit_c(p, out);
  fclose(out);
  char *text = arena_strndup(p->arena, buf, len);
  free(buf);
  return text;
}

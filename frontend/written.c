/* written.c: tile slots read before anything writes them, found statically,
 * as warnings.
 *
 * On hardware a tile slot holds whatever the last kernel left in SBUF or
 * PSUM until an instruction writes it, so reading it first is a bug
 * (bfsync zeroes its tiles, which would hide it). The f64 reference
 * reports such a read at run time, for the parameters it runs; this pass
 * reports, at check time, the reads that are wrong whenever they run, and
 * only those: it never rejects a kernel that some execution runs
 * correctly.
 *
 * It is an over-approximation of the writes that may precede a read R.
 * Instructions are numbered in program order (instr_id), so that the
 * writes that can happen before R are:
 *   - outside any loop: those numbered below R (both branches of an
 *     earlier conditional count, as either may have run);
 *   - inside loops: those, and every write in the outermost loop around R
 *     (an earlier iteration of any enclosing loop may have run it);
 *   - but when R sits directly in its innermost loop L (not inside a
 *     conditional within L), the first time R runs is in the first
 *     iteration of the first entry of L that runs at all, and by then only
 *     writes numbered below R, or later in the outer loops' bodies (in an
 *     earlier outer iteration), can have run: L's own writes after R
 *     cannot, as L has not run before.
 * If no write of the slot R reads is in that set, the first time R runs,
 * in every execution that runs it, it reads the slot unwritten: a warning
 * at R's operand. A warning, not an error: a read that no execution runs
 * (in a loop of no iterations, in a branch never taken) is not wrong, and
 * kernels made for differential testing (bfsync gen) rely on bfsync
 * zeroing its tiles; `bfsync run` still fails on any such read it runs
 * (backend/reference_f64.c). A slot computed at run
 * time (x[i % 2]) is known only as "some slot": a write with one may have
 * written any slot, and a read with one is reported only when no slot of
 * the tile can have been written. Conditions are not evaluated, and a read
 * that no parameters ever run (in a loop of no iterations, say) is still
 * reported.
 *
 * Writes of a tile are kept sorted by (slot, position), with a run-time
 * slot as -1, and by position alone, so each question is at most two
 * binary searches. */
#include <inttypes.h>
#include <stdlib.h>

#include "runtime/ops.h"
#include "frontend/program.h"

typedef struct Write {
  int64_t slot; /* -1: a slot computed at run time */
  int pos;      /* instr_id */
} Write;

typedef struct Writes {
  Write *items;   /* by (slot, pos) */
  int *positions; /* every write's pos, ascending */
  int n;
} Writes;

typedef struct Written {
  Program *p;
  Writes *by_tile;
  int *loop_end;  /* by loop id: 1 + the last instr_id in the loop */
} Written;

static int compare_writes(const void *a, const void *b) {
  const Write *x = a, *y = b;
  if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Whether e has no names (parameters, loop variables, device integers). */
static bool constant_expr(const Expr *e) {
  if (!e) return true;
  if (e->kind == EX_NAME || e->kind == EX_ELEM) return false;
  return constant_expr(e->lhs) && constant_expr(e->rhs);
}

/* The slot operand o names, or -1 when it is computed at run time. */
static int64_t slot_of(const Operand *o) {
  if (!o->slot) return 0;
  int64_t slot;
  if (!constant_expr(o->slot) || expr_eval(o->slot, NULL, NULL, &slot, NULL)) return -1;
  return slot;
}

static bool reads_operand(const Stmt *in, int i) { return bfrt_op_reads(in->op, i); }

/* Whether operand i is a tile the instruction writes (ops.def's roles). */
static bool writes_tile(const Stmt *in, int i) {
  return in->operands[i].kind == OPND_TILE && bfrt_op_writes(in->op, i);
}

/* The first of the n sorted keys at or after (slot, pos). */
static int first_write_from(const Writes *w, int64_t slot, int pos) {
  int lo = 0, hi = w->n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    const Write *m = &w->items[mid];
    if (m->slot < slot || (m->slot == slot && m->pos < pos)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Whether a write of exactly slot (-1: a run-time slot) is at a position in [from, to). */
static bool slot_written_in(const Writes *w, int64_t slot, int from, int to) {
  int i = first_write_from(w, slot, from);
  return i < w->n && w->items[i].slot == slot && w->items[i].pos < to;
}

/* Whether any write of the tile is at a position in [from, to). */
static bool tile_written_in(const Writes *w, int from, int to) {
  int lo = 0, hi = w->n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (w->positions[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < w->n && w->positions[lo] < to;
}

/* Whether a write at a position in [from, to) may have written slot (-1:
 * a run-time slot, which may be any). */
static bool may_be_written(const Writes *w, int64_t slot, int from, int to) {
  if (from >= to) return false;
  if (slot < 0) return tile_written_in(w, from, to);
  return slot_written_in(w, slot, from, to) || slot_written_in(w, -1, from, to);
}

/* Where R is: its innermost loop (NULL outside loops), the outermost one,
 * and whether a conditional within the innermost loop (or, outside loops,
 * anywhere) encloses it. */
typedef struct Place {
  const Stmt *inner, *outer;
  bool conditional;
} Place;

static void check_read(Written *w, const Stmt *in, int i, Place at) {
  const Operand *o = &in->operands[i];
  const Writes *writes = &w->by_tile[o->decl];
  int64_t slot = slot_of(o);
  int pos = in->instr_id;
  bool first_iteration = at.inner && !at.conditional;
  bool written;
  if (!at.inner) {
    written = may_be_written(writes, slot, 0, pos);
  } else if (!first_iteration) {
    written = may_be_written(writes, slot, 0, w->loop_end[at.outer->loop_id]);
  } else {
    written = may_be_written(writes, slot, 0, pos) ||
              may_be_written(writes, slot, w->loop_end[at.inner->loop_id], w->loop_end[at.outer->loop_id]);
  }
  if (written) return;
  const Tile *t = &w->p->kernel->tiles[o->decl];
  const char *name = t->slotted && slot >= 0 ? arena_printf(w->p->arena, "%s[%" PRId64 "]", t->name, slot) : t->name;
  const char *where = !first_iteration ? ""
                      : at.inner == at.outer ? " in the first iteration of its loop"
                                             : " in the first iteration of its innermost loop";
  diag_warning(&w->p->diag, o->span, "'%s' reads %s %s%s before anything writes it%s", in->op_name,
               t->mem == MEM_PSUM ? "psum tile" : "tile", name, slot < 0 && t->slotted ? " (any slot)" : "",
               where);
}

static void walk(Written *w, const Stmt *list, Place at);

/* Whether an earlier operand of in reads the same tile (one warning is enough). */
static bool read_before(const Stmt *in, int i) {
  for (int j = 0; j < i; j++)
    if (in->operands[j].kind == OPND_TILE && reads_operand(in, j) && in->operands[j].decl == in->operands[i].decl)
      return true;
  return false;
}

static void walk_stmt(Written *w, const Stmt *s, Place at) {
  switch (s->kind) {
  case ST_FOR:
    walk(w, s->body, (Place){s, at.outer ? at.outer : s, false});
    break;
  case ST_BLOCK: walk(w, s->body, at); break;
  case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
  case ST_IF:
    at.conditional = true;
    walk(w, s->body, at);
    walk(w, s->orelse, at);
    break;
  case ST_INSTR:
    for (int i = 0; i < s->noperands; i++)
      if (s->operands[i].kind == OPND_TILE && reads_operand(s, i) && !read_before(s, i)) check_read(w, s, i, at);
    break;
  }
}

static void walk(Written *w, const Stmt *list, Place at) {
  for (const Stmt *s = list; s; s = s->next) walk_stmt(w, s, at);
}

/* 1 + the last instr_id in list, or next when it has none. */
static int measure(Written *w, const Stmt *list, int next) {
  for (const Stmt *s = list; s; s = s->next) {
    if (s->kind == ST_INSTR) next = s->instr_id + 1;
    if (s->kind == ST_BLOCK || s->kind == ST_FOR) next = measure(w, s->body, next);
    if (s->kind == ST_IF) next = measure(w, s->orelse, measure(w, s->body, next));
    if (s->kind == ST_FOR) w->loop_end[s->loop_id] = next;
  }
  return next;
}

void check_tiles_written(Program *p) {
  Kernel *k = p->kernel;
  Written w = {p, ARENA_ARRAY(p->arena, Writes, k->ntiles + 1), ARENA_ARRAY(p->arena, int, k->nloops + 1)};
  int *count = ARENA_ARRAY(p->arena, int, k->ntiles + 1);
  for (int i = 0; i < k->ninstrs; i++)
    for (int j = 0; j < k->instrs[i]->noperands; j++)
      if (writes_tile(k->instrs[i], j)) count[k->instrs[i]->operands[j].decl]++;
  for (int t = 0; t < k->ntiles; t++) {
    w.by_tile[t].items = ARENA_ARRAY(p->arena, Write, count[t] + 1);
    w.by_tile[t].positions = ARENA_ARRAY(p->arena, int, count[t] + 1);
  }
  for (int i = 0; i < k->ninstrs; i++) { /* in program order: positions ascend */
    const Stmt *in = k->instrs[i];
    for (int j = 0; j < in->noperands; j++) {
      if (!writes_tile(in, j)) continue;
      Writes *ws = &w.by_tile[in->operands[j].decl];
      ws->positions[ws->n] = in->instr_id;
      ws->items[ws->n++] = (Write){slot_of(&in->operands[j]), in->instr_id};
    }
  }
  for (int t = 0; t < k->ntiles; t++)
    qsort(w.by_tile[t].items, (size_t)w.by_tile[t].n, sizeof(Write), compare_writes);
  measure(&w, k->body, 0);
  walk(&w, k->body, (Place){NULL, NULL, false});
}

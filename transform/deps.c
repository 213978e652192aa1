/* deps.c: which instructions conflict, and how a consumer can know when.
 *
 * Two dynamic instances conflict when they touch the same element of a tile
 * slot (a view x[p0:p1, f0:f1] touches part of it), or overlapping hbm
 * regions of one tensor, and at least one writes. Statically
 * we compare two instructions a and b under an assumption about which loop
 * variables hold the same value for both: the variables of loops that
 * enclose both and run the same iteration ("common" loops). A slot written
 * as an affine form in loop variables and parameters, optionally reduced
 * `% S` (S a multiple of the tile's slot count; a slot in range equals its
 * value mod S either way), is compared through the difference of the two
 * forms: when every variable coefficient is a multiple of S, the slots are
 * equal or differ for every value of the variables. Variables of loops that
 * are not common are distinct unknowns. Failing that, a slot is compared
 * as the integer it is (a slot in range is its value), with each `x % c`
 * in it an opaque unknown, shared by both instructions when x's loops are
 * common to them: 16 * (n % 2) + 1 and 16 * (n % 2) differ in one
 * iteration, and by the power-of-two test below in any two. Anything else
 * is "may conflict".
 * hbm tiles compare coordinate by coordinate when the tile shapes agree,
 * and two coordinates differ for certain when their difference is never 0:
 * its constant is not a multiple of the power of two dividing every
 * coefficient (X[4g + 1] against X[4g' + 3]); it is k * (v_a - v_b) for the
 * variable of a loop the two run in different iterations of (P[t] against
 * P[t'] of an earlier t'); or its bounds over the loops' ranges are a
 * constant below or above 0 (Y[t], t < A, against Y[A + t']). Each lets a
 * queue's transfer skip a wait on another queue's disjoint region, which
 * the run-time tracking of hbm (per cell, barrier_free.c) would otherwise
 * check.
 *
 * deps_need classifies, for a consumer b and a producer engine e, how b
 * learns need_e(b). It scans backwards in program order within the current
 * iteration: the instructions before b in its loop body (an id range),
 * then, before crossing the start of that loop's body (which reaches earlier
 * iterations), it checks that no e-instruction of the loop can conflict with
 * b in another iteration, and continues outside. The first may-conflicting
 * e-instruction found decides: if it runs exactly once in this iteration
 * (its loop encloses b) and certainly conflicts, its position is the
 * threshold in closed form; otherwise the consumer tracks e's accesses at
 * run time. Nothing found at all means no wait. */
#include "transform/deps.h"

#include <limits.h>
#include <string.h>

#include "runtime/ops.h"
#include "util/numbers.h"

enum { MAX_TERMS = 8 };

/* ---- Flattening the kernel. */

typedef struct Builder {
  Deps *d;
  int next_instr;
  int branch; /* innermost branch being flattened, -1 when none */
} Builder;

static void add_accessor(Deps *d, int res, int engine, int id, bool write) {
  AccessorList *l = &d->accessors[res * d->nengines + engine];
  if (l->n && l->ids[l->n - 1] == id) {
    /* the same instruction again (e.g. matmul_acc reads and writes acc) */
  } else {
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 4;
      int *ids = ARENA_ARRAY(d->p->arena, int, cap);
      if (l->n) memcpy(ids, l->ids, sizeof(int) * (size_t)l->n);
      l->ids = ids;
      l->cap = cap;
    }
    l->ids[l->n++] = id;
  }
  if (write) l->any_write = true;
  else l->any_read = true;
}

static void add_access(InstrInfo *in, int res, bool write, const Operand *o) {
  if (in->naccesses == 2 * BFRT_MAX_OPERANDS) bug("deps: too many accesses at line %d", in->line);
  Access *a = &in->accesses[in->naccesses++];
  a->res = res;
  a->write = write;
  a->operand = o;
}

/* Each tile or hbm operand is read, written or both, as its role in
 * ops.def says (an accumulator is a read and a write). An hbm tile takes
 * the shape of the tile operand (of its view). */
static void collect_accesses(Deps *d, InstrInfo *in) {
  const Stmt *s = in->stmt;
  const Operand *shape = NULL;
  int tile = -1, most = 0;
  for (int i = 0; i < s->noperands; i++)
    if (s->operands[i].kind != OPND_IMM) most += bfrt_op_reads(s->op, i) + bfrt_op_writes(s->op, i);
  in->accesses = ARENA_ARRAY(d->p->arena, Access, most);
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    if (o->kind == OPND_TILE) {
      if (!shape) {
        shape = o;
        tile = o->decl;
      }
      if (bfrt_op_reads(s->op, i)) add_access(in, o->decl, false, o);
      if (bfrt_op_writes(s->op, i)) add_access(in, o->decl, true, o);
    } else if (o->kind == OPND_HBM) {
      add_access(in, d->k->ntiles + o->decl, bfrt_op_writes(s->op, i), o);
    }
  }
  for (int i = 0; i < in->naccesses; i++) {
    Access *a = &in->accesses[i];
    if (a->res >= d->k->ntiles) {
      if (!shape) bug("deps: hbm operand without a tile at line %d", in->line);
      a->rows = shape->ext[0];
      a->cols = shape->ext[1];
      a->tile = tile;
    } else {
      a->rows = a->operand->ext[0];
      a->cols = a->operand->ext[1];
      a->tile = a->res;
    }
    add_accessor(d, a->res, in->engine, (int)(in - d->instrs), a->write);
  }
}

static void flatten(Builder *b, const Stmt *s, int loop, int depth) {
  Deps *d = b->d;
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR: {
      if (s->instr_id != b->next_instr) bug("deps: instruction ids not in program order");
      InstrInfo *in = &d->instrs[b->next_instr++];
      in->stmt = s;
      in->engine = s->engine;
      in->loop = loop;
      in->branch = b->branch;
      in->line = source_line(&d->p->src, s->span.begin);
      collect_accesses(d, in);
      break;
    }
    case ST_FOR: {
      LoopInfo *l = &d->loops[s->loop_id];
      l->stmt = s;
      l->parent = loop;
      l->depth = depth;
      l->line = source_line(&d->p->src, s->span.begin);
      l->first = b->next_instr;
      flatten(b, s->body, s->loop_id, depth + 1);
      l->end = b->next_instr;
      break;
    }
    case ST_BLOCK: flatten(b, s->body, loop, depth); break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF: {
      IfInfo *info = &d->ifs[s->if_id];
      info->stmt = s;
      info->loop = loop;
      info->first = b->next_instr;
      int outer = b->branch;
      for (int side = 0; side < 2; side++) {
        b->branch = 2 * s->if_id + side;
        d->branch_parent[b->branch] = outer;
        flatten(b, side ? s->orelse : s->body, loop, depth);
      }
      b->branch = outer;
      info->end = b->next_instr;
      break;
    }
    }
  }
}

/* Requires: instrs filled. Ensures: engine_of and run_end. */
static void find_runs(Deps *d) {
  d->engine_of = ARENA_ARRAY(d->p->arena, unsigned char, d->ninstrs + 1);
  d->run_end = ARENA_ARRAY(d->p->arena, int, d->ninstrs + 1);
  for (int i = d->ninstrs - 1; i >= 0; i--) {
    d->engine_of[i] = (unsigned char)d->instrs[i].engine;
    bool next_is_sibling = i + 1 < d->ninstrs && d->instrs[i].stmt->next == d->instrs[i + 1].stmt;
    d->run_end[i] = next_is_sibling ? d->run_end[i + 1] : i + 1;
  }
}

Deps *deps_build(Program *p) {
  Deps *d = ARENA_NEW(p->arena, Deps);
  const Kernel *k = p->kernel;
  d->p = p;
  d->k = k;
  d->ninstrs = k->ninstrs;
  d->nloops = k->nloops;
  d->nres = k->ntiles + k->ntensors;
  d->nengines = p->target->nengines;
  d->instrs = ARENA_ARRAY(p->arena, InstrInfo, d->ninstrs + 1);
  d->loops = ARENA_ARRAY(p->arena, LoopInfo, d->nloops + 1);
  d->accessors = ARENA_ARRAY(p->arena, AccessorList, d->nres * d->nengines + 1);
  d->nbranches = 2 * k->nifs;
  d->branch_parent = ARENA_ARRAY(p->arena, int, d->nbranches + 1);
  d->ifs = ARENA_ARRAY(p->arena, IfInfo, k->nifs + 1);
  Builder b = {d, 0, -1};
  flatten(&b, k->body, -1, 0);
  if (b.next_instr != d->ninstrs) bug("deps: %d instructions, kernel says %d", b.next_instr, d->ninstrs);
  find_runs(d);
  return d;
}

const AccessorList *deps_accessors(const Deps *d, int res, int e) {
  return &d->accessors[res * d->nengines + e];
}

bool deps_encloses(const Deps *d, int l, int i) { return d->loops[l].first <= i && i < d->loops[l].end; }

static bool branch_encloses(const Deps *d, int branch, int i) {
  for (int br = d->instrs[i].branch; br >= 0; br = d->branch_parent[br])
    if (br == branch) return true;
  return false;
}

bool deps_branches_enclose(const Deps *d, int a, int b) {
  return d->instrs[a].branch < 0 || branch_encloses(d, d->instrs[a].branch, b);
}

int deps_outermost_branching(const Deps *d, int a, int b) {
  int found = -1;
  for (int br = d->instrs[a].branch; br >= 0 && !branch_encloses(d, br, b); br = d->branch_parent[br])
    found = br / 2;
  return found;
}

/* ---- Affine forms. */

typedef struct Term {
  int var;  /* loop id >= 0, or -1 - parameter index */
  int side; /* 0 common to both instructions, 1 only a's, 2 only b's */
  int64_t coef;
} Term;

typedef struct Affine {
  int64_t c;
  int n;
  Term t[MAX_TERMS];
} Affine;

/* The two instructions being compared and which loops they share; crossed
 * is a loop (or -1) known to run a and b in different iterations: the
 * backward scan's "earlier iterations of l". */
typedef struct Pair {
  const Deps *d;
  int a, b, common_limit, crossed;
  int res; /* compare only accesses of this resource; -1: all */
  /* When shift != 0, a runs shift iterations of loop shift_loop (a common
   * loop) before b: its variable is b's minus shift (deps_may_conflict_at). */
  int shift_loop;
  int64_t shift;
  struct Atoms *atoms; /* NULL: `x % c` is not affine */
} Pair;

/* Slot expressions such as 16 * (n % 2) + k take `x % c` (c a constant
 * > 0) as an opaque term, an atom: one unknown shared by both instructions
 * when every loop variable in x is common to them (the same value for
 * both), else one unknown per instruction. Nothing is assumed of its value,
 * so the affine tests stay sound; 16 * (n % 2) + 1 and 16 * (n' % 2) then
 * never meet (never_zero), and in one iteration they differ by 1. Atoms
 * are numbered per comparison, below every parameter's term. */
enum { MAX_ATOMS = 4, ATOM_VAR = INT_MIN / 2 };

typedef struct Atoms {
  const Expr *e[MAX_ATOMS];
  int n;
} Atoms;

static bool shifted(const Pair *pr, int loop) { return pr->shift && loop == pr->shift_loop; }

static bool common_loop(const Pair *pr, int l) {
  return pr->d->loops[l].depth < pr->common_limit && deps_encloses(pr->d, l, pr->a) &&
         deps_encloses(pr->d, l, pr->b);
}

static bool add_term(Affine *f, int var, int side, int64_t coef) {
  for (int i = 0; i < f->n; i++)
    if (f->t[i].var == var && f->t[i].side == side)
      return !__builtin_add_overflow(f->t[i].coef, coef, &f->t[i].coef);
  if (f->n == MAX_TERMS) return false;
  f->t[f->n++] = (Term){var, side, coef};
  return true;
}

/* f += scale * g; false when that overflows. */
static bool add_scaled(Affine *f, const Affine *g, int64_t scale) {
  int64_t v;
  if (__builtin_mul_overflow(g->c, scale, &v) || __builtin_add_overflow(f->c, v, &f->c)) return false;
  for (int i = 0; i < g->n; i++)
    if (__builtin_mul_overflow(g->t[i].coef, scale, &v) || !add_term(f, g->t[i].var, g->t[i].side, v)) return false;
  return true;
}

static bool all_common(const Pair *pr, const Expr *e);

/* The atom of x % c in pr's table, or -1 when the table is full. */
static int atom_id(const Pair *pr, const Expr *e) {
  Atoms *t = pr->atoms;
  for (int i = 0; i < t->n; i++)
    if (deps_same_expr(t->e[i], e)) return i;
  if (t->n == MAX_ATOMS) return -1;
  t->e[t->n] = e;
  return t->n++;
}

/* f += scale * e; false when e is not affine (or overflows). */
static bool accumulate(const Pair *pr, Affine *f, const Expr *e, int64_t scale, int side) {
  int64_t v;
  Affine k = {0};
  switch (e->kind) {
  case EX_INT:
    return !__builtin_mul_overflow(e->value, scale, &v) && !__builtin_add_overflow(f->c, v, &f->c);
  case EX_NAME:
    if (e->sym == SYM_PARAM) return add_term(f, -1 - e->index, 0, scale);
    if (side == 1 && shifted(pr, e->index))
      return !__builtin_mul_overflow(pr->shift, scale, &v) && !__builtin_sub_overflow(f->c, v, &f->c) &&
             add_term(f, e->index, 0, scale);
    return add_term(f, e->index, common_loop(pr, e->index) ? 0 : side, scale);
  case EX_NEG: return scale != INT64_MIN && accumulate(pr, f, e->lhs, -scale, side);
  case EX_ADD: return accumulate(pr, f, e->lhs, scale, side) && accumulate(pr, f, e->rhs, scale, side);
  case EX_SUB:
    return scale != INT64_MIN && accumulate(pr, f, e->lhs, scale, side) &&
           accumulate(pr, f, e->rhs, -scale, side);
  case EX_MUL: {
    /* One factor must be a constant. Each factor is walked once: walking
     * the other again once one proved constant made a chain of n products
     * cost 2^n walks. */
    Affine r = {0};
    if (!accumulate(pr, &k, e->lhs, 1, side) || !accumulate(pr, &r, e->rhs, 1, side)) return false;
    if (k.n == 0) return !__builtin_mul_overflow(k.c, scale, &v) && add_scaled(f, &r, v);
    if (r.n == 0) return !__builtin_mul_overflow(r.c, scale, &v) && add_scaled(f, &k, v);
    return false;
  }
  case EX_MOD: {
    if (!pr->atoms || e->rhs->kind != EX_INT || e->rhs->value <= 0) return false;
    int id = atom_id(pr, e);
    return id >= 0 && add_term(f, ATOM_VAR - id, all_common(pr, e) ? 0 : side, scale);
  }
  default: return false;
  }
}

bool deps_same_expr(const Expr *a, const Expr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case EX_INT: return a->value == b->value;
  case EX_NAME: return a->sym == b->sym && a->index == b->index;
  case EX_NEG: return deps_same_expr(a->lhs, b->lhs);
  case EX_ELEM: /* read-only during the kernel: the same element has one value */
    return a->index == b->index && deps_same_expr(a->lhs, b->lhs) && deps_same_expr(a->rhs, b->rhs);
  default: return deps_same_expr(a->lhs, b->lhs) && deps_same_expr(a->rhs, b->rhs);
  }
}

/* Whether every loop variable in e is common to the pair. */
static bool all_common(const Pair *pr, const Expr *e) {
  if (!e) return true;
  if (e->kind == EX_NAME) return e->sym != SYM_LOOPVAR || (common_loop(pr, e->index) && !shifted(pr, e->index));
  return all_common(pr, e->lhs) && all_common(pr, e->rhs);
}

typedef enum Relation { REL_SAME, REL_DIFFERENT, REL_UNKNOWN } Relation;

static int64_t mod_nonneg(int64_t x, int64_t m) {
  int64_t r = x % m;
  return r < 0 ? r + m : r;
}

/* Whether sum(coef * var) + c = 0 has no solution in wrapping 64-bit
 * arithmetic: when every coefficient is a multiple of 2^t (t the fewest
 * trailing zero bits among them), so is the sum, whatever the variables,
 * and c is not. (The integer GCD test would be unsound for odd factors,
 * which are invertible modulo 2^64.) X[4 * g + 1] and X[4 * g' + 3] of
 * two iterations never meet. */
static bool never_zero(const Affine *f) {
  int t = 63;
  for (int i = 0; i < f->n; i++)
    if (f->t[i].coef && __builtin_ctzll((unsigned long long)f->t[i].coef) < t)
      t = __builtin_ctzll((unsigned long long)f->t[i].coef);
  return ((uint64_t)f->c & (((uint64_t)1 << t) - 1)) != 0;
}

/* Whether the difference is k * (v_a - v_b) for the variable v of the
 * crossed loop, whose values differ: then it is not 0 (k has at most 16
 * trailing zero bits, so wrapping would need loops of 2^48 iterations).
 * P[t] loaded in iteration t never meets P[t'] stored in an earlier one. */
static bool other_iterations(const Pair *pr, const Affine *f) {
  if (pr->crossed < 0 || f->c != 0 || f->n != 2) return false;
  const Term *x = &f->t[0], *y = &f->t[1];
  return x->var == pr->crossed && y->var == pr->crossed && x->side && y->side && x->side != y->side &&
         x->coef == -y->coef && x->coef != 0 && __builtin_ctzll((unsigned long long)x->coef) <= 16;
}

/* One bound of f over the loop variables' ranges: each variable v of loop
 * `for v in lo .. hi` is replaced by hi - 1 or lo, whichever moves f
 * toward the bound (upper: hi - 1 for a positive coefficient). Only a
 * bound that comes out constant (the parameters cancel) is of use; false
 * otherwise. An instance exists only while its loops run, so v is in
 * [lo, hi - 1] whenever a or b executes. */
static bool constant_bound(const Pair *pr, const Affine *f, bool upper, int64_t *out) {
  Affine g = {.c = f->c};
  for (int i = 0; i < f->n; i++) {
    const Term *t = &f->t[i];
    if (t->var < 0) {
      if (!add_term(&g, t->var, t->side, t->coef)) return false;
      continue;
    }
    const Stmt *loop = pr->d->loops[t->var].stmt;
    bool high = (t->coef > 0) == upper;
    if (!accumulate(pr, &g, high ? loop->hi : loop->lo, t->coef, t->side)) return false;
    if (high && __builtin_sub_overflow(g.c, t->coef, &g.c)) return false;
  }
  for (int i = 0; i < g.n; i++)
    if (g.t[i].coef != 0) return false;
  *out = g.c;
  return true;
}

/* Whether f is below 0 or above 0 for every value its variables take. */
static bool never_zero_in_ranges(const Pair *pr, const Affine *f) {
  int64_t bound;
  return (constant_bound(pr, f, true, &bound) && bound < 0) || (constant_bound(pr, f, false, &bound) && bound > 0);
}

/* How ea (of a) and eb (of b) relate modulo m (m = 0: as integers). */
static Relation compare_exprs(const Pair *pr, const Expr *ea, const Expr *eb, int64_t m) {
  Affine f = {0};
  if (accumulate(pr, &f, ea, 1, 1) && accumulate(pr, &f, eb, -1, 2)) {
    for (int i = 0; i < f.n; i++)
      if (m ? mod_nonneg(f.t[i].coef, m) != 0 : f.t[i].coef != 0)
        return m == 0 && (never_zero(&f) || other_iterations(pr, &f) || never_zero_in_ranges(pr, &f))
                   ? REL_DIFFERENT
                   : REL_UNKNOWN;
    return (m ? mod_nonneg(f.c, m) == 0 : f.c == 0) ? REL_SAME : REL_DIFFERENT;
  }
  return deps_same_expr(ea, eb) && all_common(pr, ea) ? REL_SAME : REL_UNKNOWN;
}

/* A slot `f % m` with m a multiple of S selects slot f mod S. */
static const Expr *strip_mod(const Expr *slot, int64_t slots) {
  if (slot->kind == EX_MOD && slot->rhs->kind == EX_INT && slot->rhs->value > 0 &&
      slot->rhs->value % slots == 0)
    return slot->lhs;
  return slot;
}

/* Last, the slots as integers with `% c` as atoms: a slot in range is its
 * value, so two slots are the same exactly when the values are equal. */
static Relation compare_slots(const Pair *pr, const Access *x, const Access *y) {
  const Tile *t = &pr->d->k->tiles[x->res];
  if (t->slots == 1) return REL_SAME;
  const Expr *sx = x->operand->slot, *sy = y->operand->slot;
  if (!sx || !sy) bug("deps: slotted tile %s without a slot", t->name);
  Relation r = compare_exprs(pr, strip_mod(sx, t->slots), strip_mod(sy, t->slots), t->slots);
  if (r == REL_UNKNOWN) r = compare_exprs(pr, sx, sy, t->slots);
  if (r == REL_UNKNOWN) {
    Atoms atoms = {.n = 0};
    Pair q = *pr;
    q.atoms = &atoms;
    r = compare_exprs(&q, sx, sy, 0);
  }
  return r;
}

/* A ragged view or slice covers at most its extent, maybe nothing: two of
 * them may conflict, never certainly. */
static bool ragged(const Operand *o) { return o->clip[0] || o->clip[1]; }

/* How two views' intervals [sx lx, sx lx + ex) and [sy ly, sy ly + ey)
 * along one dimension relate (s the unit of an hbm tile coordinate, 1 for
 * a view's or a slice's start): they meet exactly when -ex < lx - ly < ey. The
 * difference f = lx - ly, as an affine form, is decided when constant;
 * otherwise its values are all c modulo 2^t (t the fewest trailing zero
 * bits among its coefficients: wrapping keeps that residue), and none in
 * (-ex, ey) is; or it is k * (v_a - v_b) for the crossed loop's variable
 * with |k| at least both extents (x[:, 512 j : 512 j + 512] of two
 * iterations); or its bounds over the loops' ranges keep it at or below
 * -ex, or at or above ey. */
static Relation compare_intervals(const Pair *pr, const Expr *lx, int64_t sx, int64_t ex, const Expr *ly, int64_t sy,
                                  int64_t ey) {
  static const Expr zero = {.kind = EX_INT};
  Affine f = {0};
  if (!accumulate(pr, &f, lx ? lx : &zero, sx, 1) || !accumulate(pr, &f, ly ? ly : &zero, -sy, 2))
    return lx && ly && sx == sy && deps_same_expr(lx, ly) && all_common(pr, lx) ? REL_SAME : REL_UNKNOWN;
  int t = 63;
  for (int i = 0; i < f.n; i++)
    if (f.t[i].coef && __builtin_ctzll((unsigned long long)f.t[i].coef) < t)
      t = __builtin_ctzll((unsigned long long)f.t[i].coef);
  if (t == 63) return -ex < f.c && f.c < ey ? REL_SAME : REL_DIFFERENT; /* constant */
  int64_t g = t >= 62 ? INT64_MAX : (int64_t)1 << t, r = (int64_t)((uint64_t)f.c & (uint64_t)(g - 1));
  if (t < 62 && r >= ey && g - r >= ex) return REL_DIFFERENT;
  if (pr->crossed >= 0 && f.c == 0 && f.n == 2 && f.t[0].var == pr->crossed && f.t[1].var == pr->crossed &&
      f.t[0].side && f.t[1].side && f.t[0].side != f.t[1].side && f.t[0].coef == -f.t[1].coef &&
      __builtin_ctzll((unsigned long long)f.t[0].coef) <= 16 && f.t[0].coef != INT64_MIN &&
      (f.t[0].coef < 0 ? -f.t[0].coef : f.t[0].coef) >= (ex > ey ? ex : ey))
    return REL_DIFFERENT;
  int64_t bound;
  if ((constant_bound(pr, &f, true, &bound) && bound <= -ex) || (constant_bound(pr, &f, false, &bound) && bound >= ey))
    return REL_DIFFERENT;
  return REL_UNKNOWN;
}

/* The indices lx + kx i (i < ex) and ly + ky j (j < ey) of one dimension
 * of a tensor, each a slice's (s 1) or an hbm tile's (lx = r, s its unit,
 * k 1). Their spans, (e - 1) k + 1 long, decide as compare_intervals does;
 * with a step, spans that meet need not: a constant difference c = lx - ly
 * meets exactly when some c + kx i is ky j (counted over i < ex, the
 * extent of a slice, at most a tile's); a difference whose values are all
 * r modulo 2^t (wrapping keeps that residue) never meets when the largest
 * power of two dividing both steps and 2^t does not divide r
 * (x[:, 0:16:2] against x[:, 1:16:2] an iteration apart). */
static Relation compare_progressions(const Pair *pr, const Expr *lx, int64_t sx, int64_t kx, int64_t ex,
                                     const Expr *ly, int64_t sy, int64_t ky, int64_t ey) {
  int64_t spx = (ex - 1) * kx + 1, spy = (ey - 1) * ky + 1;
  Relation spans = compare_intervals(pr, lx, sx, spx, ly, sy, spy);
  if (spans == REL_DIFFERENT || (kx == 1 && ky == 1)) return spans;
  static const Expr zero = {.kind = EX_INT};
  Affine f = {0};
  if (!accumulate(pr, &f, lx ? lx : &zero, sx, 1) || !accumulate(pr, &f, ly ? ly : &zero, -sy, 2))
    return kx == ky && ex == ey && sx == sy && lx && ly && deps_same_expr(lx, ly) && all_common(pr, lx) ? REL_SAME
                                                                                                       : REL_UNKNOWN;
  int t = 63;
  for (int i = 0; i < f.n; i++)
    if (f.t[i].coef && __builtin_ctzll((unsigned long long)f.t[i].coef) < t)
      t = __builtin_ctzll((unsigned long long)f.t[i].coef);
  if (t == 63) { /* constant: lx + kx i = ly + ky j for some i, j */
    for (int64_t i = 0; i < ex; i++) { /* kx i is below the span, a constant; f.c may be anything */
      int64_t v;
      if (__builtin_add_overflow(f.c, kx * i, &v)) return REL_UNKNOWN;
      if (v % ky == 0 && v / ky >= 0 && v / ky < ey) return REL_SAME;
    }
    return REL_DIFFERENT;
  }
  int64_t g = gcd_i64(kx, ky), two = g & -g;
  if (t < 62 && two > ((int64_t)1 << t)) two = (int64_t)1 << t;
  if (two > 1 && (f.c & (two - 1)) != 0) return REL_DIFFERENT;
  return spans == REL_SAME && kx == ky && f.c == 0 && f.n == 0 ? REL_SAME : REL_UNKNOWN;
}

/* Two element slices of one tensor: dimension by dimension of the tensor
 * as declared (frontend/slices.c keeps each one's start, step and extent),
 * the product of progressions meeting exactly when every dimension's do. A
 * ragged slice covers at most its extent. */
static Relation compare_slices(const Pair *pr, const Operand *ox, const Operand *oy) {
  Relation all = REL_SAME;
  for (int d = 0; d < ox->nd->rank; d++) {
    Relation r = compare_progressions(pr, ox->nd->nlo[d], 1, ox->nd->nstep[d], ox->nd->next[d], oy->nd->nlo[d], 1, oy->nd->nstep[d],
                                      oy->nd->next[d]);
    if (r == REL_DIFFERENT) return r;
    if (r == REL_UNKNOWN) all = r;
  }
  return all == REL_SAME && !ragged(ox) && !ragged(oy) ? REL_SAME : REL_UNKNOWN;
}

/* hbm tiles X[r, c] cover rows r*h .. r*h+h-1 (and columns likewise): with
 * equal shapes they coincide or are disjoint exactly when the coordinates
 * are equal or differ. */
static Relation compare_regions(const Pair *pr, const Access *x, const Access *y) {
  const Operand *ox = x->operand, *oy = y->operand;
  if (ox->view && oy->view && !ox->gather && !oy->gather) return compare_slices(pr, ox, oy);
  if (ox->view || oy->view) { /* an element slice of a 2-D tensor (or rows by index) against a slice or a tile's rows r*h .. */
    /* rows by index (a gather or scatter) may be any rows: only the columns can tell them apart */
    Relation rows = ox->gather || oy->gather
                        ? REL_UNKNOWN
                        : compare_progressions(pr, ox->view ? ox->lo[0] : ox->row, ox->view ? 1 : x->rows,
                                               ox->view ? ox->nd->nstep[0] : 1, x->rows, oy->view ? oy->lo[0] : oy->row,
                                               oy->view ? 1 : y->rows, oy->view ? oy->nd->nstep[0] : 1, y->rows);
    Relation cols = compare_progressions(pr, ox->view ? ox->lo[1] : ox->col, ox->view ? 1 : x->cols,
                                         ox->cstep > 1 ? ox->cstep : 1, x->cols, oy->view ? oy->lo[1] : oy->col,
                                         oy->view ? 1 : y->cols, oy->cstep > 1 ? oy->cstep : 1, y->cols);
    if (rows == REL_DIFFERENT || cols == REL_DIFFERENT) return REL_DIFFERENT;
    return rows == REL_SAME && cols == REL_SAME && !ragged(ox) && !ragged(oy) ? REL_SAME : REL_UNKNOWN;
  }
  if (x->rows != y->rows || x->cols != y->cols) return REL_UNKNOWN;
  Relation rows = compare_exprs(pr, x->operand->row, y->operand->row, 0);
  Relation cols = compare_exprs(pr, x->operand->col, y->operand->col, 0);
  if (rows == REL_DIFFERENT || cols == REL_DIFFERENT) return REL_DIFFERENT;
  return rows == REL_SAME && cols == REL_SAME ? REL_SAME : REL_UNKNOWN;
}

/* Two accesses of one tile: the same slot, then views that meet in both
 * dimensions (a whole slot is the view of all of it). */
static Relation compare_tile(const Pair *pr, const Access *x, const Access *y) {
  Relation slots = compare_slots(pr, x, y);
  const Operand *ox = x->operand, *oy = y->operand;
  if (slots == REL_DIFFERENT || (!ox->view && !oy->view)) return slots; /* whole slots */
  Relation rows = compare_progressions(pr, ox->lo[0], 1, ox->view ? ox->nd->nstep[0] : 1, ox->ext[0], oy->lo[0], 1,
                                       oy->view ? oy->nd->nstep[0] : 1, oy->ext[0]);
  Relation cols = compare_progressions(pr, ox->lo[1], 1, ox->view ? ox->nd->nstep[1] : 1, ox->ext[1], oy->lo[1], 1,
                                       oy->view ? oy->nd->nstep[1] : 1, oy->ext[1]);
  if (rows == REL_DIFFERENT || cols == REL_DIFFERENT) return REL_DIFFERENT;
  return slots == REL_SAME && rows == REL_SAME && cols == REL_SAME && !ragged(ox) && !ragged(oy) ? REL_SAME
                                                                                                 : REL_UNKNOWN;
}

static Relation compare_accesses(const Pair *pr, const Access *x, const Access *y) {
  if (x->res != y->res || (!x->write && !y->write)) return REL_DIFFERENT;
  return x->res < pr->d->k->ntiles ? compare_tile(pr, x, y) : compare_regions(pr, x, y);
}

/* The closest relation over every pair of accesses: SAME if some pair
 * certainly conflicts, else UNKNOWN if some pair may. */
static Relation relate_pair(const Pair *given) {
  Pair pr = *given;
  const Deps *d = pr.d;
  int a = pr.a, b = pr.b, res = pr.res;
  Relation best = REL_DIFFERENT;
  const InstrInfo *ia = &d->instrs[a], *ib = &d->instrs[b];
  for (int i = 0; i < ia->naccesses; i++)
    for (int j = 0; j < ib->naccesses; j++) {
      if (res >= 0 && ia->accesses[i].res != res) continue;
      Relation r = compare_accesses(&pr, &ia->accesses[i], &ib->accesses[j]);
      if (r == REL_SAME) return r;
      if (r == REL_UNKNOWN) best = r;
    }
  return best;
}

static Relation relate_on(const Deps *d, int a, int b, int common_limit, int crossed, int res) {
  return relate_pair(&(Pair){d, a, b, common_limit, crossed, res, -1, 0, NULL});
}

static Relation relate(const Deps *d, int a, int b, int common_limit, int crossed) {
  return relate_on(d, a, b, common_limit, crossed, -1);
}

bool deps_may_conflict(const Deps *d, int a, int b, int common_limit) {
  return relate(d, a, b, common_limit, -1) != REL_DIFFERENT;
}

bool deps_may_conflict_at(const Deps *d, int a, int b, int loop, int64_t distance) {
  return relate_pair(&(Pair){d, a, b, d->loops[loop].depth + 1, -1, -1, loop, distance, NULL}) != REL_DIFFERENT;
}

bool deps_may_precede_conflict(const Deps *d, int a, int b, int res) {
  if (a < b && relate_on(d, a, b, INT_MAX, -1, res) != REL_DIFFERENT) return true;
  for (int l = d->instrs[b].loop; l >= 0; l = d->loops[l].parent)
    if (deps_encloses(d, l, a) && relate_on(d, a, b, d->loops[l].depth, l, res) != REL_DIFFERENT) return true;
  return false;
}

bool deps_must_conflict(const Deps *d, int a, int b) { return relate(d, a, b, INT_MAX, -1) == REL_SAME; }

const char *deps_kind(const Deps *d, int a, int b) {
  bool raw = false, war = false, waw = false;
  const InstrInfo *ia = &d->instrs[a], *ib = &d->instrs[b];
  for (int i = 0; i < ia->naccesses; i++)
    for (int j = 0; j < ib->naccesses; j++) {
      const Access *x = &ia->accesses[i], *y = &ib->accesses[j];
      if (x->res != y->res) continue;
      raw |= x->write && !y->write;
      war |= !x->write && y->write;
      waw |= x->write && y->write;
    }
  return deps_kind_name(raw, war, waw);
}

const char *deps_kind_name(bool raw, bool war, bool waw) {
  static const char *const names[8] = {"none", "RAW", "WAR", "RAW+WAR", "WAW", "RAW+WAW",
                                       "WAR+WAW", "RAW+WAR+WAW"};
  return names[raw | war << 1 | waw << 2];
}

/* ---- The backward scan. */

int deps_lower_bound(const AccessorList *l, int lo) {
  int first = 0, last = l->n;
  while (first < last) {
    int mid = first + (last - first) / 2;
    if (l->ids[mid] < lo) first = mid + 1;
    else last = mid;
  }
  return first;
}

/* The latest e-instruction with id in [lo, hi) that may conflict with b, or
 * -1; crossed: a loop whose earlier iterations are scanned (else -1). */
static int latest_conflict(const Deps *d, int b, int e, int lo, int hi, int common_limit, int crossed) {
  int best = -1;
  const InstrInfo *ib = &d->instrs[b];
  for (int j = 0; j < ib->naccesses; j++) {
    const AccessorList *l = deps_accessors(d, ib->accesses[j].res, e);
    for (int i = deps_lower_bound(l, hi) - 1; i >= 0 && l->ids[i] >= lo && l->ids[i] > best; i--)
      if (relate(d, l->ids[i], b, common_limit, crossed) != REL_DIFFERENT) {
        best = l->ids[i];
        break;
      }
  }
  return best;
}

static Need need_from(const Deps *d, int b, int e, int l, int hi, bool crossed);

/* The latest conflicting instance is a's in the last iteration of its loop
 * (directly in the scanned body), or, when that loop runs no iteration,
 * whatever precedes the loop. */
static Need last_iteration(const Deps *d, int b, int e, int a, bool crossed) {
  int m = d->instrs[a].loop;
  Need before = need_from(d, b, e, d->loops[m].parent, d->loops[m].first, crossed);
  if (before.kind == NEED_TRACK) return before;
  Need *saved = ARENA_NEW(d->p->arena, Need);
  *saved = before;
  return (Need){NEED_LAST, a, m, saved, "last iteration of a loop before", NULL, -1};
}

/* need_e(b) scanning back from id hi in the body of loop l (-1: the kernel). */
static Need need_from(const Deps *d, int b, int e, int l, int hi, bool crossed) {
  for (;; l = d->loops[l].parent) {
    int lo = l >= 0 ? d->loops[l].first : 0;
    int a = latest_conflict(d, b, e, lo, hi, INT_MAX, -1);
    if (a >= 0) {
      int m = d->instrs[a].loop;
      if (deps_must_conflict(d, a, b)) {
        if (m == l) return (Need){NEED_CLOSED, a, -1, NULL, "same iteration", NULL, -1};
        if (d->loops[m].parent == l) return last_iteration(d, b, e, a, crossed);
      }
      return (Need){NEED_TRACK, -1, -1, NULL,
                    crossed ? "loop-carried (tracked)" : "same iteration (tracked)", NULL, -1};
    }
    if (l < 0) return (Need){NEED_NONE, -1, -1, NULL, NULL, NULL, -1};
    /* crossing into earlier iterations of l: any of its instructions, anywhere */
    if (latest_conflict(d, b, e, d->loops[l].first, d->loops[l].end, d->loops[l].depth, l) >= 0)
      return (Need){NEED_TRACK, -1, -1, NULL, "loop-carried (tracked)", NULL, -1};
    hi = d->loops[l].first;
    crossed = true;
  }
}

Need deps_need(const Deps *d, int b, int e) { return need_from(d, b, e, d->instrs[b].loop, b, false); }

bool deps_nothing_between(const Deps *d, int x, int b, int e) {
  int hi = b;
  for (int l = d->instrs[b].loop;; l = d->loops[l].parent) {
    int lo = l >= 0 ? d->loops[l].first : 0;
    if (x >= lo) return latest_conflict(d, b, e, x + 1, hi, INT_MAX, -1) < 0;
    if (latest_conflict(d, b, e, lo, hi, INT_MAX, -1) >= 0) return false;
    if (latest_conflict(d, b, e, d->loops[l].first, d->loops[l].end, d->loops[l].depth, l) >= 0)
      return false;
    hi = d->loops[l].first;
  }
}

int deps_latest_sure(const Deps *d, int b, int e) {
  int best = -1;
  const InstrInfo *ib = &d->instrs[b];
  for (int j = 0; j < ib->naccesses; j++) {
    const AccessorList *l = deps_accessors(d, ib->accesses[j].res, e);
    for (int i = deps_lower_bound(l, b) - 1, tries = 0; i >= 0 && l->ids[i] > best && tries < 64; i--, tries++) {
      int x = l->ids[i], m = d->instrs[x].loop;
      if ((m < 0 || deps_encloses(d, m, b)) && deps_branches_enclose(d, x, b) && deps_must_conflict(d, x, b)) {
        best = x;
        break;
      }
    }
  }
  return best;
}

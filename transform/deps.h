/* deps.h: dependence analysis shared by the two transforms (internal).
 *
 * deps_build flattens the checked kernel into what the transforms ask
 * about: each instruction's engine, enclosing loop and memory accesses
 * (resource, read or write, slot or hbm coordinates), each loop's parent and
 * instruction range, and per (resource, engine) the accessing instructions
 * in program order. Instruction ids are in program order, so "statically
 * between a and b" is an id range and a loop is the range [first, end). */
#ifndef DEPS_H
#define DEPS_H

#include <stdbool.h>

#include "frontend/program.h"
#include "transform/ir.h"

/* One memory access of an instruction. Resources: tiles 0 .. ntiles-1,
 * then tensors ntiles .. ntiles+ntensors-1 (hbm; barrier_free.c tracks a
 * tensor per cell of its grid). */
typedef struct Access {
  int res;
  bool write;
  const Operand *operand;
  int64_t rows, cols; /* hbm: the shape of the tile moved (the other operand's view); tile: the view's */
  int tile;           /* hbm: that tile operand's declaration; tile: res */
} Access;

typedef struct InstrInfo {
  const Stmt *stmt;
  int engine;
  int loop; /* innermost enclosing loop id, -1 at top level */
  int branch; /* innermost enclosing branch, -1 when none (see Deps) */
  int line;
  int naccesses;
  Access *accesses; /* naccesses of them, at most 4 */
} InstrInfo;

typedef struct LoopInfo {
  const Stmt *stmt;
  int parent; /* enclosing loop id, -1 at top level */
  int depth;  /* 0 for an outermost loop */
  int first, end; /* instruction ids inside: [first, end) */
  int line;
} LoopInfo;

typedef struct IfInfo {
  const Stmt *stmt;
  int loop;       /* innermost enclosing loop id, -1 at top level */
  int first, end; /* instruction ids inside, both branches: [first, end) */
} IfInfo;

/* The accessors of one resource on one engine, ids ascending. */
typedef struct AccessorList {
  int n, cap;
  int *ids;
  bool any_read, any_write;
} AccessorList;

typedef struct Deps {
  Program *p;
  const Kernel *k;
  int ninstrs, nloops, nres, nengines;
  InstrInfo *instrs;
  /* The same engines, packed: what a stream's walk reads at every
   * instruction of every other engine, so it stays in cache. */
  unsigned char *engine_of;
  /* Runs of sibling instructions (no loop, block or conditional between):
   * for an instruction i, the id just past the last instruction of its run.
   * A walk skips a run's instructions a stream has no use for by id. */
  int *run_end;
  LoopInfo *loops;
  AccessorList *accessors; /* [res * nengines + engine] */
  /* Branches: the then-branch of conditional i is 2 * i, its else-branch
   * 2 * i + 1; branch_parent[br] is the branch enclosing it, or -1. */
  int nbranches;
  int *branch_parent;
  IfInfo *ifs; /* [if_id] */
} Deps;

/* How the consumer b finds need_e(b) for one producer engine e. */
typedef enum NeedKind {
  NEED_NONE,   /* no e-instruction can conflict before b: no wait */
  NEED_CLOSED, /* the latest conflicting e-instance is `producer`, in this iteration */
  NEED_LAST,   /* `producer` in the last iteration of `loop`, which precedes b in
                  this iteration; `before` when that loop runs no iteration */
  NEED_TRACK,  /* run-time tracking arrays of e's accesses to b's resources */
} NeedKind;

typedef struct Need {
  NeedKind kind;
  int producer;      /* NEED_CLOSED, NEED_LAST: its instruction id */
  int loop;          /* NEED_LAST */
  const struct Need *before; /* NEED_LAST */
  const char *dist;  /* for WaitWhy */
  /* NEED_CLOSED, NEED_LAST: when not NULL, producer is the last e-instruction
   * of this conditional and whichever branch runs ends with a conflicting
   * e-instruction: the threshold is the position just after the conditional
   * (the transform sets it; producer itself may not have run). */
  const Stmt *after_if;
  /* NEED_TRACK: deps_latest_sure (or -1), an instance the wait shows complete */
  int known;
} Need;

/* Requires: a checked kernel in p. */
Deps *deps_build(Program *p);
/* The barrier-free classification of need_e(b). */
Need deps_need(const Deps *d, int b, int e);
/* Whether no e-instance that may conflict with b runs after x's instance
 * and before b, for x in the current iteration of every loop around it
 * (x's loop encloses b): then need_e(b) <= P_e(after x). */
bool deps_nothing_between(const Deps *d, int x, int b, int e);
/* The latest e-instruction x before b that surely ran once in the same
 * iteration of every loop around it (its loop is b's or one around b, and
 * every branch around it holds b) and certainly conflicts with b; -1 if
 * none within a bounded search. need_e(b) >= P_e(after x), so a wait that
 * reaches need_e(b) shows x complete. */
int deps_latest_sure(const Deps *d, int b, int e);
/* Whether instructions a and b may conflict, treating loops at depth >=
 * common_limit as running different iterations for a and b. */
bool deps_may_conflict(const Deps *d, int a, int b, int common_limit);
/* Whether a, run distance iterations of loop (which encloses both, as do
 * the loops around it, all in the same iteration for a and b) before b,
 * may conflict with b; loops inside `loop` run different iterations. */
bool deps_may_conflict_at(const Deps *d, int a, int b, int loop, int64_t distance);
/* Whether an instance of a that runs before an instance of b may conflict
 * with it on resource res: in the same iteration of every loop around both with a before
 * b, or, for some loop l around both, in an earlier iteration of l (the
 * loops outside l in the same one). Sharper than deps_may_conflict(.., 0),
 * which lets the two be in any iterations. */
bool deps_may_precede_conflict(const Deps *d, int a, int b, int res);
/* Whether a and b certainly conflict in the same iteration of every loop
 * enclosing both. */
bool deps_must_conflict(const Deps *d, int a, int b);
/* Whether two integer expressions are the same in one iteration of every
 * loop around them (the same tree over the same names). */
bool deps_same_expr(const Expr *a, const Expr *b);
/* "RAW", "WAR", "WAW" or a combination, for a earlier than b. */
const char *deps_kind(const Deps *d, int a, int b);
/* The name of a combination of dependence kinds. */
const char *deps_kind_name(bool raw, bool war, bool waw);
/* The accessor list of resource res on engine e. */
const AccessorList *deps_accessors(const Deps *d, int res, int e);
/* Index in l of the first accessor with id >= id (l->n if none). */
int deps_lower_bound(const AccessorList *l, int id);
/* Whether loop l encloses instruction i. */
bool deps_encloses(const Deps *d, int l, int i);
/* Whether every branch around instruction a also encloses b: then when b
 * runs, a's branches were taken in b's instance of them. */
bool deps_branches_enclose(const Deps *d, int a, int b);
/* The outermost conditional around a that does not enclose b (its if id),
 * or -1 when every branch around a encloses b. */
int deps_outermost_branching(const Deps *d, int a, int b);

#endif

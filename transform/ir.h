/* ir.h: the transform's output, one instruction stream per engine.
 *
 * Everything an engine executes is an explicit node: its ops, its waits
 * (with run-time threshold expressions), the bookkeeping that tracks
 * producer positions, loops and barriers. The backend only prints these
 * nodes as C, the oracle interprets them, and the simulator costs what the
 * C does. Expressions are over parameters, loop variables, the engine's
 * bookkeeping scalars and arrays; nothing else is in scope. */
#ifndef IR_H
#define IR_H

#include <stdint.h>
#include <stdio.h>

#include "frontend/ast.h"
#include "runtime/bfrt_kernel.h"
#include "runtime/ops.h"

typedef enum IrExprKind {
  IX_CONST,   /* value */
  IX_PARAM,   /* id = parameter index */
  IX_LOOPVAR, /* id = loop id */
  IX_VAR,     /* id = bookkeeping scalar of this stream */
  IX_LOAD,    /* id = bookkeeping array of this stream, a = index; for a tile's
                 array the index is an instruction's slot: value = its op and
                 line = its line, for the slot's bounds error (IrArray.tile) */
  IX_ADD,
  IX_SUB,
  IX_MUL,
  IX_DIV, /* floor division; line names the source on a zero divisor */
  IX_MOD, /* floor modulo */
  IX_MAX,
  IX_TRIPS, /* iterations of `for v in a .. b`: b - a when b > a, else 0 (ir_trips) */
  /* conditions, 0 or 1 (operands of && || ! are conditions themselves) */
  IX_LT,
  IX_LE,
  IX_GT,
  IX_GE,
  IX_EQ,
  IX_NE,
  IX_AND,    /* a && b, short-circuit */
  IX_OR,     /* a || b, short-circuit */
  IX_NOT,    /* !a */
  IX_SELECT, /* a ? b : c, only the chosen operand evaluated */
  IX_ELEM,   /* element (a, b) of i32 tensor id, read by the engine (line names it) */
  IX_HBM_ROW, /* a, once hbm tile (a, b) of tensor id, in units of the shape of
                 tile c->value (an IX_CONST), lies inside the tensor; else the
                 error of op `value` at `line` (bfrt_hbm_row): the checked row of
                 an index into a tensor's tracking array */
  IX_TILE_AT, /* a, once it is in range for dimension c->value of tile id (0: a
                 view's first partition, 1: its first column, of extent b->value;
                 2: a slot, b->value 1) or of tensor id (3, 4: an element
                 slice's first row or column, of extent b->value); else the
                 error of op `value` at `line` (bfrt_view_at, bfrt_slot,
                 bfrt_hbm_at): a checked part of a tracking array's index */
  IX_ROWS,    /* a set of tracking entries, only as the index of an IX_LOAD (the
                 max over them) or an IR_STORE (each of them): single-row cells
                 of tensor id's grid, rows->n rows r(p), p < rows->n, each with
                 rows->kc cells from column cell c, rows->ncols cells a grid
                 row. A gather's (rows->gather > 0): r(p) = element (a, b) + p
                 along rows->axis of i32 tensor rows->gather - 1, checked inside
                 tensor id with op rows->op's error at `line`; otherwise r(p) =
                 a + p for p < b (the run-time count, b <= rows->n),
                 a checked (bfrt_rows_max, bfrt_rows_store) */
} IrExprKind;

/* IX_ROWS's fixed part (in place of `value`: most nodes have none). */
typedef struct IrRows {
  int gather, axis, op;
  int64_t n, kc;
  struct IrExpr *ncols; /* over parameters */
} IrRows;

typedef struct IrExpr {
  IrExprKind kind;
  union {
    int64_t value;
    const struct IrRows *rows; /* IX_ROWS only */
  };
  int id;
  int line;
  int size; /* nodes in the printed tree, saturating (0 when not built by ir.c) */
  struct IrExpr *a, *b, *c; /* c: IX_SELECT only */
} IrExpr;

typedef struct IrOperand {
  OperandKind kind; /* OPND_TILE, OPND_HBM or OPND_IMM */
  int decl;         /* tile or tensor index */
  IrExpr *slot;     /* tile: slot (constant 0 when unslotted) */
  IrExpr *row, *col; /* hbm */
  float imm;
  const char *word; /* an immediate written as a name (an ALU op, a function, negate), or NULL */
  /* tile: a view of part of the slot (docs/language.md, "Operands"); hbm:
   * an element slice (row and col NULL). NULL without one. */
  struct IrView *v;
  /* hbm with a view: rows by index (a gather or scatter) when gather > 0:
   * i32 tensor gather - 1 holds them, its run from element (row, col) down
   * its rows (gaxis 0) or along its columns (gaxis 1), v->ext[0] long;
   * v->lo[0] is 0 */
  int gather, gaxis;
} IrOperand;

/* A view's or slice's first partition (row) and column, its extents, and
 * a ragged dimension's run-time extent max(0, min(ext, E - lo)) (NULL: ext).
 * Out of line: most operands have none. */
typedef struct IrView {
  IrExpr *lo[2];
  int64_t ext[2];
  IrExpr *n[2];
  IrExpr *step[2]; /* a view's row and column steps, a slice's in its flattened tensor (NULL: 1; frontend/slices.c) */
} IrView;

/* Why a wait exists: for `bfsync compile --explain`. */
typedef struct WaitWhy {
  int consumer_line;
  int producer_lines[4];
  int nproducers;
  const char *kind;     /* "RAW", "WAR", "WAW" or a combination */
  const char *distance; /* "same iteration", "loop-carried", "static" */
  const char *fallback; /* NULL, or why dependence analysis was conservative */
} WaitWhy;

/* Bookkeeping operations, as counted by the oracle, charged by the backend
 * (bfrt_bookkeep) and costed by the simulator: each executed IR_SET and
 * IR_STORE, and each evaluated IR_WAIT whose threshold is not IX_CONST. */
typedef enum IrKind {
  IR_OP,      /* run instr (counts on this engine) */
  IR_WAIT,    /* t = threshold; if t > known[engine]: wait S_engine >= t; known = t.
                 With counters of B < 64 bits the wait is taken in steps of at
                 most 2^(B-1) above known (docs/algorithm.md, section 7) */
  IR_SET,     /* var = value (bookkeeping) */
  IR_STORE,   /* array[index] = value (bookkeeping) */
  IR_LOOP,    /* for loop_id in lo .. hi { body } (bounds evaluated at entry) */
  IR_BARRIER, /* all engines meet; counters and known[] reset to 0 */
  IR_IF,      /* if (cond) { body } else { orelse } (cond engine-uniform) */
} IrKind;

typedef struct IrNode {
  IrKind kind;
  int line; /* source line this node comes from */
  struct IrNode *next;
  int op; /* IR_OP: BFRT_<OP>; IR_STORE: the op whose slot index is stored
             (for its bounds error, with line) */
  /* The fields of the node's kind only: a stream holds one IR_OP and a
   * wait or two per instruction, so the kinds share their storage. */
  union {
    struct { /* IR_OP */
      const Stmt *instr;
      int noperands;
      IrOperand *operands;
    };
    struct { /* IR_WAIT */
      int engine;
      IrExpr *threshold;
      const WaitWhy *why;
    };
    struct { /* IR_SET: var = value; IR_STORE: array[index] = value */
      int var;
      int array;
      IrExpr *index;
      IrExpr *value;
    };
    struct { /* IR_LOOP (and IR_IF: body is the then-branch) */
      int loop_id;
      IrExpr *lo, *hi;
      struct IrNode *body;
      IrExpr *cond;          /* IR_IF */
      struct IrNode *orelse; /* IR_IF */
    };
  };
} IrNode;

typedef struct IrArray {
  const char *name; /* for printing: what it tracks */
  IrExpr *length;   /* over parameters only; evaluated at engine start */
  int tile;         /* the tile whose slots index it (length = its slots), or -1 (index 0) */
} IrArray;

typedef struct IrStream {
  IrNode *body;
  int nvars, vars_cap;
  const char **var_names;
  int narrays;
  IrArray *arrays;
  int nnotes, notes_cap;
  const char **notes; /* for --explain: how the stream counts a producer through a loop whose
                         count depends on the loop's variable (closed form or running count) */
} IrStream;

/* The sync modes; their names and passes are the table in transform/sync.c.
 * SYNC_UNROLLED: every loop unrolled for the parameters (and device
 * integers) of one run, static thresholds only (transform/unrolled.c);
 * SYNC_PAPER: the allocation of Sung et al., with barriers for the shapes it
 * does not cover (transform/paper.c). */
typedef enum SyncMode { SYNC_BARRIER_FREE, SYNC_BARRIER, SYNC_UNROLLED, SYNC_PAPER, SYNC_MODE_COUNT } SyncMode;

typedef struct IrProgram {
  SyncMode sync;
  int nengines;
  IrStream streams[BFRT_MAX_ENGINES];
  /* [engine]: each stream's registers, semaphores and scratch plan, or
   * NULL until resources_plan (transform/resources.c) measures them */
  const struct EngineResources *resources;
} IrProgram;

struct Program;
/* The trip count of `for v in lo .. hi`: hi - lo when hi > lo, else 0,
 * exact (it is computed in uint64_t, where any difference fits). A loop
 * of more than IR_MAX_TRIPS iterations cannot run: its engines' 64-bit
 * counters would overflow before it ends, so the reference executor, the
 * oracle and the generated code (bfrt_loop) all stop the kernel at its
 * entry with the same error; every trip count that reaches arithmetic is
 * therefore below 2^63. */
#define IR_MAX_TRIPS ((uint64_t)INT64_MAX)
uint64_t ir_trips(int64_t lo, int64_t hi);

/* Whether index, into an array of length len, is in range whatever the
 * parameters: a constant in range, or x % m for a constant 0 < m <= len
 * (floor modulo). Other bookkeeping indices are checked when they run, as
 * slots are, with the slot's error (bfrt_slot), before any array access. */
int ir_index_in_range(const IrExpr *index, const IrExpr *len);

/* The expression fields node n evaluates, by its kind (IR_OP: each
 * operand's slot, row and column; IR_WAIT: the threshold; IR_SET: the
 * value; IR_STORE: index and value; IR_LOOP: the bounds; IR_IF: the
 * condition), some of them NULL. Returns how many, at most IR_NODE_EXPRS.
 * The one place that knows which fields a kind uses (they share storage). */
enum { IR_MAX_OPERANDS = BFRT_MAX_OPERANDS, IR_NODE_EXPRS = 7 * IR_MAX_OPERANDS };
int ir_node_fields(IrNode *n, IrExpr **fields[IR_NODE_EXPRS]);
/* The same fields' values, for passes that only read them. */
int ir_node_exprs(const IrNode *n, const IrExpr *xs[IR_NODE_EXPRS]);

/* The engines whose counters stream s waits on, one bit each: the pairs
 * the runtime's back-pressure keeps within the counter window (section 7
 * of docs/algorithm.md). */
uint32_t ir_tracks(const IrStream *s);
/* The first reason a wait of ir names for a conservative dependence
 * analysis (WaitWhy.fallback) that accepted(reason) does not take; with
 * accepted NULL, the first reason of any; NULL when none. */
const char *ir_fallback(const IrProgram *ir, bool (*accepted)(const char *why));

/* Print every stream readably (bfsync compile --emit=ir). */
void ir_print(const struct Program *p, FILE *out);
/* Print each wait with its provenance (bfsync compile --explain). */
void ir_explain(const struct Program *p, FILE *out);
/* Requires: p->ir. Ensures: well-formed streams (ids in range, ops on the
 * engine that can run them); aborts with a message otherwise. */
void ir_validate(struct Program *p);

/* ---- Builders (transform/ir.c). Nodes come from the arena; the arithmetic
 * builders fold constants, so thresholds that are known at compile time
 * stay IX_CONST (no bookkeeping). An IrExpr is never changed once built:
 * builders share subtrees, and ir_const shares small constants. */
struct Arena;
IrExpr *ir_const(struct Arena *arena, int64_t value);
IrExpr *ir_leaf(struct Arena *arena, IrExprKind kind, int id); /* PARAM, LOOPVAR, VAR */
/* array[index], index being the slot of instruction op at line. */
IrExpr *ir_load(struct Arena *arena, int array, IrExpr *index, int op, int line);
IrExpr *ir_binary(struct Arena *arena, IrExprKind kind, IrExpr *a, IrExpr *b, int line);
/* The AST expression e as an IrExpr (lines of / and % from p's source). */
IrExpr *ir_from_expr(const struct Program *p, const Expr *e);
/* The condition c as an IrExpr of value 0 or 1. */
IrExpr *ir_from_cond(const struct Program *p, const Cond *c);
/* Element (row, col) of i32 tensor `tensor`, read at source line `line`. */
IrExpr *ir_elem(struct Arena *arena, int tensor, IrExpr *row, IrExpr *col, int line);
/* Row, checked: hbm tile (row, col) of tensor, in units of tile's shape, as
 * op at line accesses it (IX_HBM_ROW). */
IrExpr *ir_hbm_row(struct Arena *arena, int tensor, int tile, IrExpr *row, IrExpr *col, int op, int line);
/* at, checked: in range for dimension dim of tile (0, 1: a view's first
 * partition or column, of extent n; 2: a slot, n = 1) as op at line uses it
 * (IX_TILE_AT). */
IrExpr *ir_tile_at(struct Arena *arena, int tile, int dim, IrExpr *at, int64_t n, int op, int line);
/* The entries of rows (IX_ROWS) of tensor's grid, rows->n rows from a (b:
 * their run-time count, NULL for rows->n) or by gather, from column cell c. */
IrExpr *ir_rows(struct Arena *arena, int tensor, const IrRows *rows, IrExpr *a, IrExpr *b, IrExpr *c, int line);
/* A ragged dimension's run-time extent max(0, min(n, end - lo)). */
IrExpr *ir_clipped_extent(struct Arena *arena, IrExpr *end, IrExpr *lo, int64_t n);
/* !a for a condition a. */
IrExpr *ir_not(struct Arena *arena, IrExpr *a);
/* cond ? x : y, folded when cond is constant or x and y are equal. */
IrExpr *ir_select(struct Arena *arena, IrExpr *cond, IrExpr *x, IrExpr *y);
/* A new scalar variable of stream s, named name; its id. */
int ir_new_var(struct Arena *arena, IrStream *s, const char *name);
/* A node of kind from source line `line`; all other fields zero. */
IrNode *ir_node(struct Arena *arena, IrKind kind, int line);
/* The IR_OP node running instruction instr (its operands lowered to IR). */
IrNode *ir_op(const struct Program *p, const Stmt *instr, int line);
/* Whether a and b are the same expression, node for node. */
int ir_expr_equal(const IrExpr *a, const IrExpr *b);
/* Print e in infix form, names taken from p's kernel and stream s. */
void ir_print_expr(const struct Program *p, const IrStream *s, const IrExpr *e, FILE *out);

/* ---- Test-only mutation of the synchronization (transform/mutate.c), for
 * the oracle's and the runtime's mutation tests. */
typedef enum IrMutation {
  DROP_WAIT,       /* remove the wait */
  LOWER_THRESHOLD, /* threshold T becomes T - 1 */
  RAISE_THRESHOLD, /* threshold T becomes T + 1 */
} IrMutation;

/* Apply kind to the index-th IR_WAIT of p->ir, counting waits engine by
 * engine in pre-order (loop bodies where they stand). Returns the number of
 * wait nodes before the mutation, or -1 (nothing changed) when index is out
 * of range; index < 0 changes nothing and returns the count. */
int ir_mutate(struct Program *p, int kind, int index);

#endif

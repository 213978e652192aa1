/* ast.h: the kernel as written. The parser builds it; sema resolves names
 * (filling the fields marked "sema") and numbers instructions and loops so
 * later passes can index side tables by id. Every node carries its Span. */
#ifndef AST_H
#define AST_H

#include <stdbool.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/diag.h"

/* ---- Expressions. Integer expressions (shapes, indices, loop bounds) are
 * 64-bit, with / and % rounding toward negative infinity. Immediates and
 * const declarations may also hold real numbers (EX_FLOAT), which sema
 * admits nowhere else. A name of a const is replaced by sema with its value
 * (EX_INT or EX_FLOAT), keeping the name in `name` for fmt. */
typedef enum ExprKind {
  EX_INT,  /* value; name: the const it came from, or NULL */
  EX_FLOAT, /* real; name: the literal as written, or the const it came from */
  EX_NAME, /* name; sema: sym and index */
  EX_NEG,  /* -lhs */
  EX_ADD,
  EX_SUB,
  EX_MUL,
  EX_DIV,
  EX_MOD,
  EX_ELEM, /* name[lhs, rhs]: an element of an i32 tensor; sema: index = tensor */
  EX_MIN,  /* min(lhs, rhs) */
  EX_MAX,  /* max(lhs, rhs) */
} ExprKind;

typedef enum SymKind { SYM_UNRESOLVED, SYM_PARAM, SYM_LOOPVAR } SymKind;

typedef struct Expr {
  ExprKind kind;
  Span span;
  int64_t value;          /* EX_INT */
  double real;            /* EX_FLOAT */
  const char *name;       /* EX_NAME */
  SymKind sym;            /* EX_NAME, sema */
  int index;              /* EX_NAME, sema: parameter index or loop id; EX_ELEM: tensor */
  struct Expr *lhs, *rhs; /* operators */
  int height;             /* parser: 1 + the tallest operand's; sema bounds it */
  const char *let;        /* sema: the let this node is the expression of, substituted at a use (fmt prints the name) */
} Expr;

/* ---- Conditions of `if`: comparisons of integer expressions combined
 * with && (binds tighter), || and !. && and || short-circuit, as in C. */
typedef enum CondOp { COND_LT, COND_LE, COND_GT, COND_GE, COND_EQ, COND_NE } CondOp;

typedef enum CondKind {
  COND_CMP, /* lhs op rhs */
  COND_AND, /* left && right */
  COND_OR,  /* left || right */
  COND_NOT, /* !left */
} CondKind;

typedef struct Cond {
  CondKind kind;
  CondOp op; /* COND_CMP */
  Span span;
  Expr *lhs, *rhs;           /* COND_CMP */
  struct Cond *left, *right; /* COND_AND, COND_OR; COND_NOT: left */
  int height;                /* parser: 1 + the tallest operand's (conditions only) */
} Cond;

/* ---- Operands: the parser sees name, name[e], name[e, e] or a number;
 * sema decides tile or hbm from the declaration. A tile operand may be a
 * view of part of its slot, name[p0:p1, f0:f1] (after the slot when the
 * tile has slots): one Slice per dimension, partitions then free. */
typedef struct Slice {
  Expr *lo, *hi; /* lo:hi; `:` alone has both NULL; a single index e is lo = e, hi = NULL */
  Span span;
  Expr *step;    /* lo:hi:k or ::k, a positive constant (sema); NULL: 1 */
} Slice;

/* The most dimensions of an hbm tensor, and what a list in the grammar
 * keeps (more are counted, for the error). */
#define MAX_RANK 4
enum { MAX_LISTED = 8 };

/* Slices as written, in order (an N-D operand's), and a tensor's dimensions. */
typedef struct SliceList {
  Slice s[MAX_LISTED];
  int n;
} SliceList;

typedef struct ExprList {
  Expr *e[MAX_LISTED];
  int n;
} ExprList;
/* A gather or scatter's row selector IDX[r0:r1, c] or IDX[r, c0:c1]: the
 * rows of the hbm operand are the i32 elements of that run of IDX, one per
 * partition of the tile moved (docs/language.md, "Operands"). */
typedef struct Gather {
  const char *name; /* the index tensor as written */
  Span span, name_span;
  Slice dim[2];     /* as written: exactly one a range */
  int tensor;       /* sema: the index tensor */
  int axis;         /* sema: 0 when the run goes down IDX's rows, 1 along its columns */
  Expr *elem;       /* sema: IDX[row, col] of the run's first element, an EX_ELEM (reads, messages) */
  int64_t n;        /* sema: its length, the partitions moved */
} Gather;

typedef enum OperandKind {
  OPND_NAME, /* parser: not yet resolved */
  OPND_TILE, /* sema: tile decl, slot (NULL when unslotted) */
  OPND_HBM,  /* sema: tensor decl, row and col */
  OPND_IMM,  /* an immediate: a constant expression, or the name of a const (sema) */
} OperandKind;

/* A view's or an element slice's dimensions as written, over a tile's two
 * or a tensor's rank (row major; frontend/slices.c): each one's first
 * index (NULL: 0), step and extent (1 for an integer index), and which two
 * of them the tile's partitions and columns run along (tdim). */
typedef struct SliceDims {
  int rank;
  Expr *nlo[MAX_RANK];
  int64_t nstep[MAX_RANK], next[MAX_RANK];
  int tdim[2];
} SliceDims;

typedef struct Operand {
  OperandKind kind;
  Span span;
  const char *name;
  int nindex;     /* 0, 1 or 2 indices as written */
  Expr *index[2]; /* as written */
  int decl;       /* sema: tile or tensor index */
  Expr *slot;     /* sema, OPND_TILE: index[0] or NULL */
  Expr *row, *col; /* sema, OPND_HBM */
  bool view;       /* a view or an element slice was written: dim below */
  Slice *dim;      /* parser: its slices as written (arena; NULL without a view) */
  int ndim;        /* parser: how many (2 for a tile view; 2 .. MAX_RANK for an hbm slice) */
  /* sema: a ragged dimension, written lo:min(lo + C, E): its extent is
   * clipped to max(0, min(C, E - lo)) at run time (ext = C); NULL otherwise */
  Expr *clip[2];
  Expr *lo[2];     /* sema, OPND_TILE: the view's first partition and column (NULL: 0);
                      OPND_HBM with a view (an element slice): its first row and column */
  int64_t ext[2];  /* sema, OPND_TILE: the view's extents (the tile's shape without a view);
                      OPND_HBM with a view: the slice's */
  /* sema, a view or an element slice: its dimensions (below; out of line,
   * as most operands have none). For OPND_HBM, lo[0], lo[1] are then the
   * first row and column of the tensor flattened to [rows, cols] (rows
   * the product of all dimensions but the last), rstep the distance in
   * flattened rows between partitions (NULL: 1) and cstep the distance
   * in columns between columns. */
  SliceDims *nd;
  Expr *rstep;
  int64_t cstep;
  Gather *gather;  /* OPND_HBM: rows by index, X[IDX[..], c0:c1] (a view; lo[0] NULL, ext[0] = gather->n), or NULL */
  Expr *imm_expr; /* OPND_IMM, and OPND_NAME without indices (it may name a const) */
  double imm_value; /* OPND_IMM, sema: the exact value (the f64 reference uses it) */
  float imm;        /* OPND_IMM, sema: imm_value rounded to f32 (what the engines use) */
  char vocab;       /* OPND_IMM, sema: 'o', 'f' or 'n' when a name from that role's vocabulary
                       (an ALU op, an activation function, negate), carried as its code */
} Operand;

/* ---- Statements: a sibling list (next). */
typedef enum StmtKind {
  ST_FOR,   /* for var in lo .. hi { body } */
  ST_BLOCK, /* engine { body } */
  ST_INSTR, /* [engine:] op operands ; */
  ST_IF,    /* if (cond) { body } else { orelse } */
  ST_LET,   /* let var = lo;  (op_name: the word written before var, which must be `let`) */
} StmtKind;

typedef struct Stmt {
  StmtKind kind;
  Span span;
  struct Stmt *next;

  /* ST_FOR */
  const char *var;
  Span var_span;
  Expr *lo, *hi;
  int loop_id; /* sema: 0.. in program order */
  int depth;   /* sema: number of enclosing loops */

  /* ST_BLOCK and ST_INSTR: engine as written (NULL inside a block) */
  const char *engine_name;
  Span engine_span;
  int engine; /* sema: engine index in the target (ST_INSTR: the one it runs on) */

  /* ST_FOR, ST_BLOCK, ST_IF */
  struct Stmt *body;
  Cond *cond;           /* ST_IF */
  struct Stmt *orelse;  /* ST_IF */
  uint32_t then_close;  /* ST_IF: offset of the then-body's closing brace */
  bool chained;         /* ST_IF: written `else if`, the whole else of its parent */
  int if_id;            /* ST_IF, sema: 0.. in program order */

  /* ST_INSTR */
  const char *op_name;
  Span op_span;
  int op; /* sema: BFRT_<OP> */
  int noperands;
  Operand *operands;
  int instr_id; /* sema: 0.. in program order */
  struct Stmt *parent_loop; /* sema: innermost enclosing ST_FOR, or NULL */
} Stmt;

/* ---- Declarations. */
typedef struct Param {
  const char *name;
  Span span;
} Param;

typedef enum IoKind { IO_IN, IO_OUT, IO_INOUT } IoKind;

/* Element types, numbered as the runtime's BFRT_DTYPE_* (docs/language.md,
 * "Element types"): f32; i32, device integers (hbm in tensors only); bf16,
 * fp8e4 (OCP E4M3), fp8e5 (OCP E5M2) and fp16 (IEEE binary16), storage
 * types that ops compute with in f32 and round to, to nearest even, when
 * they store. */
typedef enum ElemType { ELEM_F32, ELEM_I32, ELEM_BF16, ELEM_FP8E4, ELEM_FP8E5, ELEM_FP16, ELEM_NTYPES } ElemType;

/* The largest |x| that rounds to a finite f32: just below the midpoint
 * between FLT_MAX and 2^128, where the tie goes to 2^128 (Inf), FLT_MAX's
 * last significand bit being 1. A real value is out of f32's range only
 * beyond it: 3.4028235e38, FLT_MAX as C and numpy print it, is above
 * FLT_MAX and rounds to it. */
#define F32_LARGEST_FINITE 0x1.FFFFFEFFFFFFFp127

/* The type named name (as written: f32, i32, bf16, fp8e4, fp8e5, fp16), or -1. */
int elem_type_of(const char *name);
const char *elem_type_name(ElemType type);

typedef struct Tensor {
  const char *name;
  Span span;
  IoKind io;
  Expr *rows, *cols; /* over parameters; an N-D tensor's flattened: rows the product of all dimensions but the last */
  int rank;          /* 2 .. MAX_RANK (more as written, refused by sema) */
  Expr *dims[MAX_LISTED]; /* as written (rank of them; rank 2: rows, cols) */
  bool ints;         /* sema: i32 elements, device integers read in integer expressions */
  const char *elem;  /* the element type as written when not the keyword f32, else NULL */
  Span elem_span;
  ElemType type;     /* sema: elem resolved */
} Tensor;

typedef enum MemKind { MEM_SBUF, MEM_PSUM } MemKind;

/* const NAME = expr; an integer when expr has no real number in it. */
typedef struct Const {
  const char *name;
  Span span;
  Expr *value;
  bool real;       /* sema */
  int64_t integer; /* sema, when !real */
  double number;   /* sema: the value, also of an integer const */
  bool ok;         /* sema: evaluated without error */
} Const;

typedef struct Tile {
  const char *name;
  Span span;
  MemKind mem;
  Expr *slots_expr;          /* NULL when unslotted */
  Expr *rows_expr, *cols_expr;
  bool slotted;
  int64_t slots, rows, cols; /* sema: evaluated (slots = 1 when unslotted) */
  const char *elem;          /* the element type as written when not the keyword f32, else NULL */
  Span elem_span;
  ElemType type;             /* sema: elem resolved */
} Tile;

typedef struct Kernel {
  const char *name;
  Span span;
  int nparams, ntensors, ntiles, nconsts;
  Param *params;
  Const *consts;
  Tensor *tensors;
  Tile *tiles;
  Stmt *body;
  uint32_t end; /* parser: offset of the closing brace */
  int ncomments;
  Span *comments; /* parser: every comment, in source order (fmt keeps them) */
  /* sema */
  int ninstrs, nloops, nifs;
  Stmt **instrs; /* by instr_id */
  Stmt **loops;  /* by loop_id */
} Kernel;

/* The bytes per element instruction s moves, for the cost model: the
 * wider of its destination's and first source's element types (an
 * immediate counts as the destination's); the simulator's rule too. */
int instr_elem_bytes(const Kernel *k, const Stmt *s);

/* Deepest nesting of loops and blocks that bfsync accepts (docs/language.md). */
#define MAX_NESTING 200
/* Deepest expression: parentheses and brackets nested, and the height of an
 * expression tree. Recursive passes over expressions rely on it. */
#define MAX_EXPR_DEPTH 1000
/* The most values an integer expression may keep pending on the C
 * compiler's value stack (libtcc holds 256, and the statement around an
 * expression and the transform's bookkeeping need some): sema weighs each
 * nesting as the emitted C does (backend/emit_c.c), a right operand 1, a
 * division's or modulo's operands 2 and 3, a device read's row and column
 * 3 and 4, a left operand 0. */
#define MAX_EXPR_C_STACK 160
/* Largest tile, slots * rows * cols elements. */
#define MAX_TILE_ELEMS ((int64_t)1 << 26)

/* ---- Builders (frontend/ast.c): what the grammar's actions call. Lists
 * are built by appending, in constant time, in source order. */
typedef struct StmtList {
  Stmt *head, *tail;
} StmtList;

typedef struct OperandList {
  Operand *items;
  int n, cap;
} OperandList;

Expr *expr_int(Arena *a, Span span, int64_t value);
Expr *expr_name(Arena *a, Span span, const char *name);
/* count unary minuses (spanning minus_span) applied to operand. */
Expr *expr_negs(Arena *a, Span minus_span, int count, Expr *operand);
Expr *expr_binary(Arena *a, ExprKind kind, Expr *lhs, Expr *rhs);
/* name(lhs, rhs) for name min or max; NULL for any other name. */
Expr *expr_call(Arena *a, Span span, const char *name, Expr *lhs, Expr *rhs);
/* name[row, col], an element of an i32 tensor. */
Expr *expr_elem(Arena *a, Span span, const char *name, Expr *row, Expr *col);
Cond *cond_new(Arena *a, Span span, CondOp op, Expr *lhs, Expr *rhs);
/* left && right, left || right (kind COND_AND or COND_OR). */
Cond *cond_binary(Arena *a, CondKind kind, Cond *left, Cond *right);
/* !operand; span covers the '!' and the operand. */
Cond *cond_not(Arena *a, Span span, Cond *operand);

/* name, name[i0] or name[i0, i1] as written (nindex of them). */
Operand operand_name(Span span, const char *name, int nindex, Expr *i0, Expr *i1);
Expr *expr_float(Arena *a, Span span, const char *text);
/* name[slot][d0, d1] (slot NULL when written name[d0, d1]): a tile view. */
Operand operand_view(Arena *a, Span span, const char *name, Expr *slot, Slice d0, Slice d1);
/* name[d0, d1, rest...]: an element slice of an N-D hbm tensor. */
Operand operand_nd(Arena *a, Span span, const char *name, Slice d0, Slice d1, const SliceList *rest);
/* name[g][d1]: an hbm operand whose rows are the elements of index run g. */
Operand operand_gather(Arena *a, Span span, const char *name, Gather g, Slice d1);
/* IDX[d0, d1] as a gather's row selector (exactly one of d0, d1 a range: the grammar's). */
Gather gather_of(Span span, const char *name, Span name_span, Slice d0, Slice d1);
/* A slice lo:hi (both NULL for `:`), or a single index lo (hi NULL). */
Slice slice_of(Span span, Expr *lo, Expr *hi);
/* sl with a step k (lo:hi:k, ::k). */
Slice slice_step(Span span, Slice sl, Expr *k);
SliceList slice_list_add(SliceList l, Slice s);
ExprList expr_list_add(ExprList l, Expr *e);
/* Whether a and b are the same expression tree (names by resolution). */
bool expr_equal(const Expr *a, const Expr *b);
/* A number every value of e is a multiple of (0: e is always 0), params
 * giving the parameters' values (NULL: unknown, alignment 1): a view that
 * starts at such values and is a multiple of it long covers whole cells of
 * that size (the oracle's and the tracking arrays' grids over a tile). */
int64_t expr_alignment(const Expr *e, const int64_t *params);
/* hi - lo as a constant, when their difference cancels to one (both
 * checked: names resolved): a linear combination of subexpressions with
 * integer coefficients, equal subexpressions cancelling. */
bool expr_const_difference(const Expr *hi, const Expr *lo, int64_t *out);
/* An operand written as an expression: a bare name (a tile, or a const) or
 * an immediate. */
Operand operand_expr(Span span, Expr *e);
/* The list with operand appended (malloc'd, as the parser holds it). */
OperandList operand_list_add(OperandList list, Operand operand);
void operand_list_free(OperandList *list);

/* Appends s (a NULL s, from error recovery, is skipped). */
StmtList stmt_list_add(StmtList list, Stmt *s);
Stmt *stmt_for(Arena *a, Span span, const char *var, Span var_span, Expr *lo, Expr *hi,
               StmtList body);
Stmt *stmt_block(Arena *a, Span span, const char *engine, Span engine_span, StmtList body);
/* Copies the operands into the arena and frees the list. */
Stmt *stmt_instr(Arena *a, Span span, const char *op, Span op_span, OperandList operands);
/* `WORD NAME = value;`: a let when WORD is `let` (sema checks the word). */
Stmt *stmt_let(Arena *a, Span span, const char *word, Span word_span, const char *name, Span name_span, Expr *value);
/* `engine: instr`: places instr on engine; span covers both. */
Stmt *stmt_place(Stmt *instr, Span span, const char *engine, Span engine_span);
/* then_close: offset of the then-body's closing brace. */
Stmt *stmt_if(Arena *a, Span span, Cond *cond, StmtList then, uint32_t then_close, StmtList orelse);
/* `else if ...`: the list holding only the chained conditional s. */
StmtList stmt_else_if(Stmt *s);

/* Declarations, appended to k's arrays (*cap is the array's room). */
void kernel_add_param(Arena *a, Kernel *k, int *cap, const char *name, Span span);
void kernel_add_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                       Expr *rows, Expr *cols);
/* `hbm io NAME: ELEM[rows, cols]` with ELEM not the keyword f32: i32, bf16,
 * fp8e4, fp8e5 or fp16 (not keywords, so they stay usable as names); sema rejects any
 * other. */
void kernel_add_typed_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                             const char *elem, Span elem_span, Expr *rows, Expr *cols);
/* hbm io name: elem[d0, d1, ...] with three or more dimensions (elem NULL: f32). */
void kernel_add_nd_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                          const char *elem, Span elem_span, Expr *d0, Expr *d1, const ExprList *rest);
void kernel_add_tile(Arena *a, Kernel *k, int *cap, MemKind mem, const char *name, Span span,
                     Expr *slots, Expr *rows, Expr *cols);
/* `mem NAME[slots]: ELEM[rows, cols]` with ELEM not the keyword f32. */
void kernel_add_typed_tile(Arena *a, Kernel *k, int *cap, MemKind mem, const char *name, Span span,
                           Expr *slots, const char *elem, Span elem_span, Expr *rows, Expr *cols);
void kernel_add_const(Arena *a, Kernel *k, int *cap, const char *name, Span span, Expr *value);
/* Records a comment (scanner). */
void kernel_add_comment(Arena *a, Kernel *k, int *cap, Span span);
/* Names the kernel and gives it its statements; whole spans it all. */
void kernel_finish(Kernel *k, const char *name, Span span, Span whole, StmtList body);
/* The language's / and % for b != 0: floor division and modulo, with
 * a / -1 = -a wrapping (INT64_MIN / -1 = INT64_MIN) and a % -1 = 0. The
 * one definition: the IR's folding and the oracle use it too. */
int64_t int_floor_div(int64_t a, int64_t b);
int64_t int_floor_mod(int64_t a, int64_t b);

/* What an expression reads at run time: parameters, loop variables (by
 * loop id) and the i32 tensors (ints[t] row-major with shape[t], NULL for
 * an f32 tensor; NULL for none). bad_at: the element of a failed read. */
typedef struct EvalEnv {
  const int64_t *params, *loopvars;
  const void *const *ints; /* int32 elements (stored in float-sized cells) */
  const int64_t (*shape)[2];
  int64_t bad_at[2];
} EvalEnv;

enum { EVAL_DIV_ZERO = -1, EVAL_OUT_OF_RANGE = -2 };

/* Evaluate e: 0, EVAL_DIV_ZERO on a division by zero or EVAL_OUT_OF_RANGE
 * on an element read outside its tensor (env->bad_at), *bad = the node. */
int expr_eval_in(const Expr *e, EvalEnv *env, int64_t *out, const Expr **bad);
/* expr_eval_in over parameters and loop variables only (no element reads). */
int expr_eval(const Expr *e, const int64_t *params, const int64_t *loopvars, int64_t *out,
              const Expr **bad);
/* The row gather g names for partition p (0 <= p < g->n): IDX's element
 * at[axis] + p along its run, read through env like an EX_ELEM (same
 * status codes; env->bad_at the element on EVAL_OUT_OF_RANGE). */
int gather_row_eval(const Gather *g, EvalEnv *env, int64_t p, int64_t *out, const Expr **bad);
/* Whether `a op b` holds. */
bool cond_holds(CondOp op, int64_t a, int64_t b);
/* Evaluate c (short-circuit) like expr_eval_in. */
int cond_eval(const Cond *c, EvalEnv *env, bool *out, const Expr **bad);

#endif

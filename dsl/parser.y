/* parser.y: the grammar of the kernel language (docs/language.md).
 *
 * A pure, reentrant LALR(1) parser with no conflicts. Every action is one
 * call to a builder in frontend/ast.c; no semantic check happens here, so
 * the grammar stays the language's definition. Locations are Spans (byte
 * offsets), joined from the first to the last symbol of each rule.
 *
 * Recovery: a broken declaration or statement is skipped up to its ';' (or
 * the '}' ending it), so one run reports several syntax errors. A parse with
 * any error leaves p->kernel NULL and the pipeline stops.
 *
 * Nesting is bounded by the scanner (see lexer.l), which keeps the parser's
 * stack well under YYMAXDEPTH; unary minus chains are left-recursive so
 * they need no stack at all. A condition in parentheses and an expression
 * in parentheses share their prefix; the parser decides at the token after
 * the first complete expression (a comparison, or ')'), so no conflict. */
%code requires {
#include <stdbool.h>

#include "frontend/program.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

/* A number as written, and its value when it is an integer. */
typedef struct Lit {
  int64_t value;
  const char *text;
} Lit;

/* Everything one parse needs; the scanner's extra data too. */
typedef struct ParseState {
  Program *p;
  Kernel *kernel;
  int param_cap, tensor_cap, tile_cap, const_cap, comment_cap;
  uint32_t offset;        /* scanner: bytes consumed */
  uint32_t comment_begin; /* scanner: where the open comment started */
  int brace_depth, bracket_depth;
  bool stopped; /* scanner ended the input at a nesting error: report nothing more */
} ParseState;

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                            \
  do {                                                                                         \
    if (N) {                                                                                   \
      (Cur).begin = YYRHSLOC(Rhs, 1).begin;                                                    \
      (Cur).end = YYRHSLOC(Rhs, N).end;                                                        \
    } else {                                                                                   \
      (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end;                                          \
    }                                                                                          \
  } while (0)
}

%code {
#include "dsl/lexer.h"

#define YYMAXDEPTH 100000
#define ARENA (ps->p->arena)

static void yyerror(Span *at, yyscan_t scanner, ParseState *ps, const char *message);

/* min(a, b) or max(a, b); any other name is an error at it (the result a
 * placeholder, since the parse has failed). */
static Expr *call(ParseState *ps, Span span, Span name_span, const char *name, Expr *a, Expr *b) {
  Expr *e = expr_call(ARENA, span, name, a, b);
  if (e) return e;
  diag_error(&ps->p->diag, name_span, "unknown function '%s': integer expressions have min(a, b) and max(a, b)", name);
  return a;
}
}

%define api.pure full
%define api.location.type {Span}
%define parse.error custom
%define parse.lac full
%locations
%param {yyscan_t scanner}
%parse-param {ParseState *ps}
%expect 0

%union {
  const char *name;
  Lit lit;
  int count;
  Expr *expr;
  Cond *cond;
  CondOp cmp;
  IoKind io;
  MemKind mem;
  Operand operand;
  OperandList operands;
  Slice slice;
  Gather gather;
  Stmt *stmt;
  StmtList stmts;
}

/* An operand list grows in malloc'd memory (an arena block would be
 * abandoned at every doubling) until its instruction copies it. */
%destructor { operand_list_free(&$$); } <operands>

%token <name> IDENT "identifier"
%token <lit> INT "integer"
%token <lit> FLOAT "number"
%token KERNEL "'kernel'" CONST "'const'" INT_KW "'int'" HBM "'hbm'" IN "'in'" OUT "'out'" INOUT "'inout'"
%token SBUF "'sbuf'" PSUM "'psum'" F32 "'f32'" FOR "'for'" IF "'if'" ELSE "'else'"
%token DOTDOT "'..'" LE "'<='" GE "'>='" EQ "'=='" NE "'!='" ANDAND "'&&'" OROR "'||'"

%left OROR
%left ANDAND
%precedence '!'
%left '+' '-'
%left '*' '/' '%'

%type <expr> expr unary primary slots
%type <count> minuses
%type <cond> cond
%type <cmp> compare
%type <io> io
%type <mem> mem
%type <operand> operand
%type <operands> operands
%type <slice> range vdim
%type <gather> rows
%type <stmt> stmt instr if
%type <stmts> stmts else

%%

/* file = kernel */
file: kernel ;

/* kernel = "kernel" IDENT "(" [param {"," param}] ")" "{" {decl} {stmt} "}" */
kernel:
  KERNEL IDENT '(' params ')' '{' decls stmts '}' { kernel_finish(ps->kernel, $2, @2, @$, $8); }
;

params: %empty | param_list ;
param_list: param | param_list ',' param ;

/* param = IDENT ":" "int" */
param: IDENT ':' INT_KW { kernel_add_param(ARENA, ps->kernel, &ps->param_cap, $1, @1); } ;

decls: %empty | decls decl ;

/* decl = "hbm" io IDENT ":" ("f32" | IDENT) "[" expr "," expr "]" ";"   (IDENT: i32, bf16, fp16, fp8e4, fp8e5)
 *      | mem IDENT ["[" expr "]"] ":" ("f32" | IDENT) "[" expr "," expr "]" ";"   (IDENT: bf16, fp16, fp8e4, fp8e5)
 *      | "const" IDENT "=" expr ";" */
decl:
  HBM io IDENT ':' F32 '[' expr ',' expr ']' ';'
    { kernel_add_tensor(ARENA, ps->kernel, &ps->tensor_cap, $2, $3, @3, $7, $9); }
| HBM io IDENT ':' IDENT '[' expr ',' expr ']' ';'
    { kernel_add_typed_tensor(ARENA, ps->kernel, &ps->tensor_cap, $2, $3, @3, $5, @5, $7, $9); }
| mem IDENT slots ':' F32 '[' expr ',' expr ']' ';'
    { kernel_add_tile(ARENA, ps->kernel, &ps->tile_cap, $1, $2, @2, $3, $7, $9); }
| mem IDENT slots ':' IDENT '[' expr ',' expr ']' ';'
    { kernel_add_typed_tile(ARENA, ps->kernel, &ps->tile_cap, $1, $2, @2, $3, $5, @5, $7, $9); }
| CONST IDENT '=' expr ';'
    { kernel_add_const(ARENA, ps->kernel, &ps->const_cap, $2, @2, $4); }
| HBM error ';'
| CONST error ';'
| mem error ';'
;

io: IN { $$ = IO_IN; } | OUT { $$ = IO_OUT; } | INOUT { $$ = IO_INOUT; } ;
mem: SBUF { $$ = MEM_SBUF; } | PSUM { $$ = MEM_PSUM; } ;
slots: %empty { $$ = NULL; } | '[' expr ']' { $$ = $2; } ;

stmts: %empty { $$ = (StmtList){0}; } | stmts stmt { $$ = stmt_list_add($1, $2); } ;

/* stmt = "for" IDENT "in" expr ".." expr "{" {stmt} "}"
 *      | IDENT "{" {stmt} "}"                 (an engine block)
 *      | [IDENT ":"] instr                    (an instruction, placed on an engine)
 *      | "let" IDENT "=" expr ";"             (an integer name; `let` is not a keyword: sema checks the word)
 *      | if */
stmt:
  FOR IDENT IN expr DOTDOT expr '{' stmts '}' { $$ = stmt_for(ARENA, @$, $2, @2, $4, $6, $8); }
| IDENT '{' stmts '}'                         { $$ = stmt_block(ARENA, @$, $1, @1, $3); }
| IDENT ':' instr                             { $$ = stmt_place($3, @$, $1, @1); }
| IDENT IDENT '=' expr ';'                    { $$ = stmt_let(ARENA, @$, $1, @1, $2, @2, $4); } /* let NAME = expr; */
| instr                                       { $$ = $1; }
| if                                          { $$ = $1; }
| error ';'                                   { $$ = NULL; }
| error '}'                                   { $$ = NULL; }
;

/* if = "if" "(" cond ")" "{" {stmt} "}" ["else" ("{" {stmt} "}" | if)] */
if: IF '(' cond ')' '{' stmts '}' else { $$ = stmt_if(ARENA, @$, $3, $6, @7.begin, $8); } ;

else:
  %empty                 { $$ = (StmtList){0}; }
| ELSE '{' stmts '}'     { $$ = $3; }
| ELSE if                { $$ = stmt_else_if($2); }
;

/* instr = IDENT [operand {"," operand}] ";" */
instr:
  IDENT ';'          { $$ = stmt_instr(ARENA, @$, $1, @1, (OperandList){0}); }
| IDENT operands ';' { $$ = stmt_instr(ARENA, @$, $1, @1, $2); }
;

operands:
  operand              { $$ = operand_list_add((OperandList){0}, $1); }
| operands ',' operand { $$ = operand_list_add($1, $3); }
;

/* operand = IDENT "[" expr "]" | expr   (a bare name, an immediate, or NAME "[" expr "," expr "]", an hbm tile)
 *         | IDENT ["[" expr "]"] "[" vdim "," vdim "]"   (a tile view; one vdim a range, so
 *           that NAME "[" expr "," expr "]" stays the hbm tile it was) */
operand:
  IDENT '[' expr ']'              { $$ = operand_name(@$, $1, 1, $3, NULL); }
| expr                            { $$ = operand_expr(@$, $1); } /* X[r, c] too: an element read's shape */
| IDENT '[' range ',' vdim ']'    { $$ = operand_view(ARENA, @$, $1, NULL, $3, $5); }
| IDENT '[' expr ',' range ']'    { $$ = operand_view(ARENA, @$, $1, NULL, slice_of(@3, $3, NULL), $5); }
| IDENT '[' expr ']' '[' vdim ',' vdim ']' { $$ = operand_view(ARENA, @$, $1, $3, $6, $8); }
| IDENT '[' rows ',' vdim ']'     { $$ = operand_gather(ARENA, @$, $1, $3, $5); }
;

/* rows = IDENT "[" range "," expr "]" | IDENT "[" expr "," range "]"
 * (a gather's or scatter's rows: a run of an i32 tensor, one index a partition) */
rows:
  IDENT '[' range ',' expr ']'    { $$ = gather_of(@$, $1, @1, $3, slice_of(@5, $5, NULL)); }
| IDENT '[' expr ',' range ']'    { $$ = gather_of(@$, $1, @1, slice_of(@3, $3, NULL), $5); }
;

/* vdim = expr | range;  range = ":" | expr ":" expr   (a half-open lo:hi) */
vdim: expr { $$ = slice_of(@$, $1, NULL); } | range ;
range:
  ':'                             { $$ = slice_of(@$, NULL, NULL); }
| expr ':' expr                   { $$ = slice_of(@$, $1, $3); }
;

/* cond = cond "||" cond | cond "&&" cond | "!" cond | "(" cond ")"
 *      | expr ("<" | "<=" | ">" | ">=" | "==" | "!=") expr
 * (&& binds tighter than ||, ! tightest; both binary operators group left) */
cond:
  cond OROR cond        { $$ = cond_binary(ARENA, COND_OR, $1, $3); }
| cond ANDAND cond      { $$ = cond_binary(ARENA, COND_AND, $1, $3); }
| '!' cond              { $$ = cond_not(ARENA, @1, $2); }
| '(' cond ')'          { $$ = $2; }
| expr compare expr     { $$ = cond_new(ARENA, @$, $2, $1, $3); }
;
compare:
  '<' { $$ = COND_LT; } | LE { $$ = COND_LE; } | '>' { $$ = COND_GT; }
| GE { $$ = COND_GE; } | EQ { $$ = COND_EQ; } | NE { $$ = COND_NE; }
;

/* expr = expr ("+" | "-" | "*" | "/" | "%") expr | {"-"} primary */
expr:
  expr '+' expr { $$ = expr_binary(ARENA, EX_ADD, $1, $3); }
| expr '-' expr { $$ = expr_binary(ARENA, EX_SUB, $1, $3); }
| expr '*' expr { $$ = expr_binary(ARENA, EX_MUL, $1, $3); }
| expr '/' expr { $$ = expr_binary(ARENA, EX_DIV, $1, $3); }
| expr '%' expr { $$ = expr_binary(ARENA, EX_MOD, $1, $3); }
| unary
;

unary: primary | minuses primary { $$ = expr_negs(ARENA, @1, $1, $2); } ;
minuses: '-' { $$ = 1; } | minuses '-' { $$ = $1 + 1; } ;

/* primary = INT | FLOAT | IDENT | IDENT "[" expr "," expr "]" | IDENT "(" expr "," expr ")" | "(" expr ")" */
primary:
  INT          { $$ = expr_int(ARENA, @$, $1.value); }
| FLOAT        { $$ = expr_float(ARENA, @$, $1.text); }
| IDENT        { $$ = expr_name(ARENA, @$, $1); }
| IDENT '[' expr ',' expr ']' { $$ = expr_elem(ARENA, @$, $1, $3, $5); }
| IDENT '(' expr ',' expr ')' { $$ = call(ps, @$, @1, $1, $3, $5); } /* min(a, b), max(a, b) */
| '(' expr ')' { $$ = $2; }
;

%%

/* A token's name for messages: bison quotes aliases, which we drop. */
static const char *token_name(yysymbol_kind_t sym, char *buf, size_t size) {
  const char *name = yysymbol_name(sym);
  size_t n = strlen(name);
  if (n >= 2 && name[0] == '"') snprintf(buf, size, "%.*s", (int)(n - 2), name + 1);
  else snprintf(buf, size, "%s", name);
  return buf;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, ParseState *ps) {
  (void)scanner;
  if (ps->stopped) return 0;
  enum { MAX_EXPECTED = 5 };
  yysymbol_kind_t expected[MAX_EXPECTED];
  int nexpected = yypcontext_expected_tokens(ctx, expected, MAX_EXPECTED);
  yysymbol_kind_t got = yypcontext_token(ctx);
  Span at = *yypcontext_location(ctx);
  char message[400], name[64];
  int n = snprintf(message, sizeof message, "syntax error: unexpected %s",
                   token_name(got, name, sizeof name));
  if (got == YYSYMBOL_IDENT || got == YYSYMBOL_INT || got == YYSYMBOL_FLOAT)
    n += snprintf(message + n, sizeof message - (size_t)n, " '%.*s'",
                  (int)(at.end - at.begin > 40 ? 40 : at.end - at.begin), ps->p->src.text + at.begin);
  for (int i = 0; i < nexpected; i++)
    n += snprintf(message + n, sizeof message - (size_t)n, "%s%s",
                  i == 0 ? ", expected " : i == nexpected - 1 ? " or " : ", ",
                  token_name(expected[i], name, sizeof name));
  diag_error(&ps->p->diag, at, "%s", message);
  return 0;
}

static void yyerror(Span *at, yyscan_t scanner, ParseState *ps, const char *message) {
  (void)scanner;
  diag_error(&ps->p->diag, *at, "%s", message);
}

void parse(Program *p) {
  ParseState ps = {.p = p, .kernel = ARENA_NEW(p->arena, Kernel)};
  yyscan_t scanner;
  if (yylex_init_extra(&ps, &scanner)) bug("cannot create the scanner");
  YY_BUFFER_STATE buffer = yy_scan_bytes(p->src.text, (int)p->src.len, scanner);
  int errors_before = p->diag.errors;
  int status = yyparse(scanner, &ps);
  yy_delete_buffer(buffer, scanner);
  yylex_destroy(scanner);
  p->kernel = status == 0 && p->diag.errors == errors_before ? ps.kernel : NULL;
}

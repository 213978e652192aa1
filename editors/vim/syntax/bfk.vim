" Vim syntax file for bfsync kernels (.bfk). Install: copy editors/vim/syntax
" and editors/vim/ftdetect into ~/.vim (or a package's folder).
" Keywords, engines and ops are those of dsl/lexer.l and runtime/ops.def;
" tests/editors.sh checks that this file names every one of them.
if exists("b:current_syntax")
  finish
endif

syn keyword bfkKeyword kernel const int hbm in out inout sbuf psum f32
" element types that are not keywords of the language (docs/language.md, "Element types")
syn keyword bfkKeyword i32 bf16 fp16 fp8e4 fp8e5
syn keyword bfkControl for if else
syn match bfkEngine "\<\(pe\|act\|dve\|pool\|dma[0-9]*\)\>\ze\s*[:{]"
syn keyword bfkOp abs activation activation_acc add add_col add_row affine_select bn_aggr bn_stats copy exp fill gelu iota load matmul matmul_acc max memset mul mul_col mul_row nc_matmul nc_matmul_acc nc_transpose permute recip relu rowmax rowsum rowsum_exp rowsum_square rsqrt scale sigmoid silu sqrt square store sub sub_col sub_row tanh tensor_reduce tensor_scalar tensor_tensor_scan transpose
syn match bfkFloat "\<[0-9]\+\(\.[0-9]\+\([eE][-+]\=[0-9]\+\)\=\|[eE][-+]\=[0-9]\+\)\>"
syn match bfkInteger "\<[0-9]\+\>"
syn match bfkParams "^//\s*\(params\|bench\):.*$"
syn match bfkComment "//.*$" contains=bfkTodo
syn region bfkComment start="/\*" end="\*/" contains=bfkTodo
syn keyword bfkTodo contained TODO FIXME XXX

hi def link bfkKeyword Keyword
hi def link bfkControl Repeat
hi def link bfkEngine Label
hi def link bfkOp Function
hi def link bfkFloat Float
hi def link bfkInteger Number
hi def link bfkParams PreProc
hi def link bfkComment Comment
hi def link bfkTodo Todo

let b:current_syntax = "bfk"

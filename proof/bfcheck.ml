(* bfcheck.ml: the check of what runs, against the proof.

   Usage: bfcheck DUMP CFILE [NAME=VALUE ...], or bfcheck --extend (below).
   DUMP is `bfsync compile --emit=proof` (transform/ir_dump.c has the
   grammar): the kernel as the source gives it, with its parameters' names,
   tile shapes and device integers' values. CFILE is the C that bfsync
   emitted for it (`bfsync compile --emit=c`), the code `bfsync run` JITs.
   bfcheck

   - rebuilds the kernel as a value of the Coq model. Each instruction's
     accesses come from opstable.ml, generated from runtime/ops.def
     (proof/ops_table.awk): each tile and hbm operand is written, read or
     both (an accumulator) as its role in ops.def's SIG lines says, and
     touches its box (Extract.v): a whole slot, a view x[p0:p1, f0:f1] of
     one (a ragged dimension clipped to max(0, min(C, E - lo))), an hbm
     tile in units of its op's first tile operand's shape, or an element
     slice. Nothing comes from transform/deps.c's classification;
   - runs the threshold function extracted from Coq (thresholds.ml, from
     Extract.v; Extract.bf_exactness proves it equal to need_f) and the
     model's trace (Extract.bf_trace), with the kernel's integers in 64-bit
     two's complement and the device integers' values of the dump;
   - interprets the emitted C's engine functions itself (the subset emit_c.c
     prints: declarations, assignments, stores, for loops, if, bf_wait,
     bf_op_*, and the runtime's integer helpers), each on its own: every
     value a stream reads is its own (parameters, loop variables, its
     scalars and arrays, device integers). It records every wait evaluated
     before each op, as emitted: a wait the guard skips (T <= known[e]) is a
     wait that passes at once, which in the machine it is;
   - checks that engine c's k-th op is the model trace's k-th c-instance:
     the same op and source line, and every operand the same (each tile,
     slot, view, tensor, row, column and slice, as the boxes it touches),
     so the streams are the trace's projections, as Machine.v assumes;
   - counts every wait `S_f >= T` against the extracted need_f;
   - runs the extracted validator (Validate.v) on exactly those waits. If
     it accepts, Extract.bf_validated_exact says every wait is exact: never
     early (bf_validated_soundness) and never late, on whole counts and on
     B-bit counters (bf_validated_narrow_exact), and bf_validated_progress
     says nothing deadlocks. Every wait it accepts is on another engine of
     the machine, so the counters a stream waits on are those it tracks;
   - says whether every engine runs fewer than 2^B ops, B the dump's
     counter width (`unwrapped yes`): then B-bit counters on pipelined
     queues decide as whole counts (Pipeline.pipeline_narrow_unwrapped).

   It prints one summary line, and exits 0 if the validator accepts and
   every op agrees, 1 otherwise or on a run-time error in a stream, 2 on
   bad input. This file is trusted glue: it parses, interprets and
   compares, and decides no threshold itself. *)
open Thresholds

let fail code fmt = Printf.ksprintf (fun s -> prerr_endline ("bfcheck: " ^ s); exit code) fmt

(* ---- Integers to and from Coq's binary Z. *)

let rec pos_of_int n =
  if n = 1 then XH else if n land 1 = 0 then XO (pos_of_int (n lsr 1)) else XI (pos_of_int (n lsr 1))

let z_of_int n = if n = 0 then Z0 else if n > 0 then Zpos (pos_of_int n) else Zneg (pos_of_int (-n))

let rec int_of_pos = function XH -> 1 | XO p -> 2 * int_of_pos p | XI p -> (2 * int_of_pos p) + 1

let int_of_z = function Z0 -> 0 | Zpos p -> int_of_pos p | Zneg p -> -int_of_pos p

(* bfsync's integers are 64-bit and wrap; OCaml's int has 63 bits, so
   constants, parameters and the streams' arithmetic use Int64. n is read
   as unsigned here, so Int64.neg min_int (2^63) converts too. *)
let rec pos_of_int64 n =
  if n = 1L then XH
  else if Int64.logand n 1L = 0L then XO (pos_of_int64 (Int64.shift_right_logical n 1))
  else XI (pos_of_int64 (Int64.shift_right_logical n 1))

let z_of_int64 n =
  if n = 0L then Z0 else if Int64.compare n 0L > 0 then Zpos (pos_of_int64 n) else Zneg (pos_of_int64 (Int64.neg n))

let read_file path =
  try
    let ic = open_in_bin path in
    let t = really_input_string ic (in_channel_length ic) in
    close_in ic; t
  with Sys_error m -> fail 2 "%s" m

(* ---- The dump: tokens. *)

let tokens = ref [||]
let at = ref 0

let next () =
  if !at >= Array.length !tokens then fail 2 "unexpected end of dump";
  incr at;
  !tokens.(!at - 1)

let peek () = if !at < Array.length !tokens then !tokens.(!at) else ""

let int () =
  let t = next () in
  match int_of_string_opt t with Some n -> n | None -> fail 2 "expected an integer, not '%s'" t

let int64 () =
  let t = next () in
  match Int64.of_string_opt t with Some n -> n | None -> fail 2 "expected a 64-bit integer, not '%s'" t

let expect w = let t = next () in if t <> w then fail 2 "expected '%s', not '%s'" w t

(* items until "}" (the "{" already read) *)
let rec items item = if peek () = "}" then (incr at; []) else let x = item () in x :: items item

(* ---- The kernel, as the model's values. *)

let rec expr () =
  let bin f = let a = expr () in let b = expr () in f a b in
  match next () with
  | "k" -> EConst (z_of_int64 (int64 ()))
  | "p" -> EParam (int ())
  | "v" -> EVar (int ())
  | "e" -> let t = int () in let r = expr () in EElem (t, r, expr ())
  | "neg" -> ENeg (expr ())
  | "add" -> bin (fun a b -> EAdd (a, b))
  | "sub" -> bin (fun a b -> ESub (a, b))
  | "mul" -> bin (fun a b -> EMul (a, b))
  | "div" -> bin (fun a b -> EDiv (a, b))
  | "mod" -> bin (fun a b -> EMod (a, b))
  | "min" -> bin (fun a b -> EMin (a, b))
  | "max" -> bin (fun a b -> EMax (a, b))
  | t -> fail 2 "unknown expression '%s'" t

(* An operand as written, over expressions of type 'e (the model's, or
   the values the C computed): a tile slot, a view of one (per dimension
   its start and extent), an hbm tile, an element slice, an immediate. *)
type 'e operand =
  | OT of int * 'e
  | OV of int * 'e * ('e * 'e) list
  | OH of int * 'e * 'e
  | OS of int * ('e * 'e) list
  | OF

let letter = function OT _ | OV _ -> 'T' | OH _ | OS _ -> 'H' | OF -> 'F'

let ntiles = ref 0
let shapes = ref [||] (* tile -> (rows, cols) *)

let op_sig id =
  match List.find_opt (fun (i, _, _) -> i = id) Opstable.ops with
  | Some (_, s, roles) -> (s, roles)
  | None -> fail 2 "op %s is not in runtime/ops.def's table" id

let tile_shape id t =
  if t >= 0 && t < Array.length !shapes then !shapes.(t) else fail 2 "%s: no tile %d" id t

(* The accesses of an op's operands, by their roles in ops.def: a written
   operand (w) is one write, an accumulator (a) a read and a write, a read
   one (r) one read, an immediate none. Each access is a resource and, per
   dimension, (start, unit, extent): the elements start * unit ..
   start * unit + extent - 1 (Extract.eval_dim). A tile's dimensions are
   its slot, partitions and columns (a whole slot spans the tile's shape);
   an hbm tile X[r, c] is in units of the shape of the op's first tile
   operand (that view's extents when it is a view: `unit` reads them);
   an element slice is in elements. const makes an extent from a number.
   mk builds one access. *)
let accesses id ops ~const ~unit mk =
  let sg, role_letters = op_sig id in
  if String.length sg <> List.length ops || List.exists2 (fun c o -> c <> letter o) (List.init (String.length sg) (String.get sg)) ops
  then fail 2 "%s: operands %s do not fit runtime/ops.def's signature %s" id
         (String.of_seq (List.to_seq (List.map letter ops))) sg;
  let shape = lazy (match List.find_opt (function OT _ | OV _ -> true | _ -> false) ops with
    | Some (OT (t, _)) -> tile_shape id t
    | Some (OV (_, _, [ (_, n0); (_, n1) ])) -> (unit n0, unit n1)
    | _ -> (1, 1)) in
  let box = List.map (fun (lo, n) -> (lo, 1, n)) in
  let two what = function [ _; _ ] as ds -> ds | _ -> fail 2 "%s: %s without two dimensions" id what in
  List.concat (List.mapi (fun i o ->
      let roles = match role_letters.[i] with 'w' -> [true] | 'a' -> [false; true] | 'r' -> [false] | _ -> [] in
      let dims = match o with
        | OF -> None
        | OT (t, s) -> let r, c = tile_shape id t in Some (t, [ (s, 1, const 1); (const 0, 1, const r); (const 0, 1, const c) ])
        | OV (t, s, ds) -> ignore (tile_shape id t); Some (t, (s, 1, const 1) :: box (two "a view" ds))
        | OH (x, r, c) -> let h, w = Lazy.force shape in Some (!ntiles + x, [ (r, h, const h); (c, w, const w) ])
        | OS (x, ds) -> Some (!ntiles + x, box (two "a slice" ds)) in
      match dims with
      | None -> []
      | Some (res, ds) -> List.map (fun w -> mk res w ds) roles)
    ops)

let engine_of = Hashtbl.create 64 (* instruction id -> engine *)
let instr_of = Hashtbl.create 64 (* instruction id -> (op, line) *)

let cmp_of = function
  | "lt" -> CLt | "le" -> CLe | "gt" -> CGt | "ge" -> CGe | "eq" -> CEq | "ne" -> CNe
  | t -> fail 2 "unknown comparison '%s'" t

let rec cond () =
  match next () with
  | "cmp" -> let op = cmp_of (next ()) in let a = expr () in CCmp (op, a, expr ())
  | "and" -> let a = cond () in CAnd (a, cond ())
  | "or" -> let a = cond () in COr (a, cond ())
  | "not" -> CNot (cond ())
  | t -> fail 2 "unknown condition '%s'" t

(* A view's or slice's dimension: its start and its extent, for a ragged
   one (lo : min(lo + C, E)) max(0, min(C, E - lo)) as docs/language.md
   defines it, in the kernel's wrapping arithmetic. *)
let dim () =
  let kind = next () in
  let lo = expr () in
  let n = EConst (z_of_int (int ())) in
  match kind with
  | "d" -> (lo, n)
  | "r" -> let e = expr () in (lo, EMax (EConst Z0, EMin (n, ESub (e, lo))))
  | t -> fail 2 "unknown dimension '%s'" t

let operand () =
  match next () with
  | "t" -> let t = int () in OT (t, expr ())
  | "vt" -> let t = int () in let s = expr () in let d0 = dim () in OV (t, s, [ d0; dim () ])
  | "h" -> let x = int () in let r = expr () in OH (x, r, expr ())
  | "vh" -> let x = int () in let d0 = dim () in OS (x, [ d0; dim () ])
  | "f" -> OF
  | t -> fail 2 "unknown operand '%s'" t

let rec block () =
  expect "{";
  List.fold_right (fun s b -> BCons (s, b)) (items stmt) BNil

and stmt () =
  match next () with
  | "for" ->
      let l = int () in
      let lo = expr () in
      let hi = expr () in
      SFor (l, lo, hi, block ())
  | "if" ->
      let c = cond () in
      let t = block () in
      SIf (c, t, block ())
  | "instr" ->
      let id = int () in
      let e = int () in
      let op = next () in
      let line = int () in
      let n = int () in
      let ops = List.init n (fun _ -> operand ()) in
      Hashtbl.replace engine_of id e;
      Hashtbl.replace instr_of id (op, line);
      let unit = function
        | EConst z -> int_of_z z
        | _ -> fail 2 "instruction %d: an hbm tile moves with a ragged view (the language refuses it)" id in
      let mk res w ds =
        { ares = res; awrite = w; adims = List.map (fun (lo, u, n) -> { dlo = lo; dunit = z_of_int u; dext = n }) ds } in
      SInstr (id, e, accesses op ops ~const:(fun n -> EConst (z_of_int n)) ~unit mk)
  | t -> fail 2 "unknown statement '%s'" t

(* ---- The emitted C: tokens. *)

type tok = Id of string | Int of int64 | Flt | P of string

let c_tokens text =
  let n = String.length text and out = ref [] and i = ref 0 in
  let is_id c = c = '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') in
  let is_digit c = c >= '0' && c <= '9' in
  while !i < n do
    let c = text.[!i] in
    if c = ' ' || c = '\n' || c = '\t' || c = '\r' then incr i
    else if c = '/' && !i + 1 < n && text.[!i + 1] = '*' then begin
      let j = ref (!i + 2) in
      while !j + 1 < n && not (text.[!j] = '*' && text.[!j + 1] = '/') do incr j done;
      i := !j + 2
    end
    else if c = '#' && (!i = 0 || text.[!i - 1] = '\n') then begin
      (* a preprocessor line (and its continuations) *)
      while !i < n && text.[!i] <> '\n' do
        if text.[!i] = '\\' then incr i;
        incr i
      done
    end
    else if c = '"' then begin
      incr i;
      while !i < n && text.[!i] <> '"' do (if text.[!i] = '\\' then incr i); incr i done;
      incr i; out := Flt :: !out (* a string literal: never an integer *)
    end
    else if is_digit c then begin
      let j = ref !i in
      while !j < n && is_digit text.[!j] do incr j done;
      let float = ref false in
      if !j < n && text.[!j] = '.' then (float := true; incr j; while !j < n && is_digit text.[!j] do incr j done);
      if !j < n && (text.[!j] = 'e' || text.[!j] = 'E') then begin
        float := true; incr j;
        if !j < n && (text.[!j] = '+' || text.[!j] = '-') then incr j;
        while !j < n && is_digit text.[!j] do incr j done
      end;
      let digits = String.sub text !i (!j - !i) in
      while !j < n && is_id text.[!j] do float := !float || text.[!j] = 'f'; incr j done;
      out := (if !float then Flt else match Int64.of_string_opt digits with
                | Some v -> Int v | None -> fail 2 "C: integer %s is out of range" digits) :: !out;
      i := !j
    end
    else if is_id c then begin
      let j = ref !i in
      while !j < n && is_id text.[!j] do incr j done;
      out := Id (String.sub text !i (!j - !i)) :: !out;
      i := !j
    end
    else begin
      let two = if !i + 1 < n then String.sub text !i 2 else "" in
      if List.mem two ["=="; "!="; "<="; ">="; "&&"; "||"; "++"; "->"] then (out := P two :: !out; i := !i + 2)
      else (out := P (String.make 1 c) :: !out; incr i)
    end
  done;
  Array.of_list (List.rev !out)

(* ---- The emitted C: the engine functions. *)

type cx =
  | CInt of int64
  | CFlt
  | CName of string
  | CIndex of string * cx
  | CCall of string * cx list
  | CUn of string * cx
  | CBin of string * cx * cx
  | CCond of cx * cx * cx

type cs =
  | SDecl of string * cx (* scalars, temporaries, parameters; bf_known *)
  | SArray of string * cx
  | SAssign of string * cx
  | SStore of string * cx * cx
  | SLoop of string * cx * string * cx * cs list
  | SCond of cx * cs list * cs list
  | SCall of string * cx list
  | SNop

let ct = ref [||]
let cat = ref 0

let cnext () =
  if !cat >= Array.length !ct then fail 2 "C: unexpected end of file";
  incr cat;
  !ct.(!cat - 1)

let cpeek () = if !cat < Array.length !ct then !ct.(!cat) else P ""

let show = function Id s -> s | Int v -> Int64.to_string v | Flt -> "<literal>" | P s -> s

let cexpect t = let x = cnext () in if x <> t then fail 2 "C: expected '%s', not '%s'" (show t) (show x)

let cid () = match cnext () with Id s -> s | t -> fail 2 "C: expected a name, not '%s'" (show t)

let rec cexpr () =
  let c = cor () in
  if cpeek () = P "?" then (ignore (cnext ()); let a = cexpr () in cexpect (P ":"); CCond (c, a, cexpr ())) else c

and cleft ops sub () =
  let rec go a = match cpeek () with
    | P o when List.mem o ops -> ignore (cnext ()); go (CBin (o, a, sub ()))
    | _ -> a in
  go (sub ())

and cor () = cleft ["||"] cand ()
and cand () = cleft ["&&"] ceq ()
and ceq () = cleft ["=="; "!="] crel ()
and crel () = cleft ["<"; "<="; ">"; ">="] cadd ()
and cadd () = cleft ["+"; "-"] cmul ()
and cmul () = cleft ["/"; "*"] cunary ()

and cunary () =
  match cpeek () with
  | P "-" -> ignore (cnext ()); CUn ("-", cunary ())
  | P "!" -> ignore (cnext ()); CUn ("!", cunary ())
  | P "(" -> ignore (cnext ()); let e = cexpr () in cexpect (P ")"); e
  | Int v -> ignore (cnext ()); CInt v
  | Flt -> ignore (cnext ()); CFlt
  | Id s ->
      ignore (cnext ());
      (match cpeek () with
       | P "(" -> ignore (cnext ()); CCall (s, cargs ())
       | P "[" -> ignore (cnext ()); let i = cexpr () in cexpect (P "]"); CIndex (s, i)
       | _ -> CName s)
  | t -> fail 2 "C: unexpected '%s' in an expression" (show t)

and cargs () =
  if cpeek () = P ")" then (ignore (cnext ()); [])
  else
    let rec go acc =
      let a = cexpr () in
      match cnext () with
      | P "," -> go (a :: acc)
      | P ")" -> List.rev (a :: acc)
      | t -> fail 2 "C: expected ',' or ')', not '%s'" (show t) in
    go []

let rec cblock () =
  cexpect (P "{");
  let rec go acc = if cpeek () = P "}" then (ignore (cnext ()); List.rev acc) else go (cstmt () :: acc) in
  go []

and cstmt () =
  match cnext () with
  | Id "const" -> cstmt ()
  | Id "int64_t" -> (
      match cnext () with
      | P "*" ->
          let a = cid () in
          cexpect (P "=");
          (match cexpr () with
           | CCall ("bfrt_scratch", [_; len]) -> cexpect (P ";"); SArray (a, len)
           | _ -> fail 2 "C: array %s is not a bfrt_scratch" a)
      | Id v ->
          if cpeek () = P "[" then begin
            (* int64_t bf_known[N] = {0}; *)
            while cnext () <> P ";" do () done; SNop
          end else (cexpect (P "="); let x = cexpr () in cexpect (P ";"); SDecl (v, x))
      | t -> fail 2 "C: unexpected '%s' after int64_t" (show t))
  | P "(" -> (* (void)name; *)
      while cnext () <> P ";" do () done; SNop
  | Id "for" ->
      cexpect (P "("); cexpect (Id "int64_t");
      let v = cid () in cexpect (P "="); let lo = cexpr () in cexpect (P ",");
      let e = cid () in cexpect (P "="); let hi = cexpr () in cexpect (P ";");
      cexpect (Id v); cexpect (P "<"); cexpect (Id e); cexpect (P ";"); cexpect (Id v); cexpect (P "++"); cexpect (P ")");
      SLoop (v, lo, e, hi, cblock ())
  | Id "if" ->
      cexpect (P "("); let c = cexpr () in cexpect (P ")");
      let t = cblock () in
      let f = if cpeek () = Id "else" then (ignore (cnext ()); cblock ()) else [] in
      SCond (c, t, f)
  | Id name -> (
      match cnext () with
      | P "(" -> let args = cargs () in cexpect (P ";"); SCall (name, args)
      | P "=" -> let x = cexpr () in cexpect (P ";"); SAssign (name, x)
      | P "[" -> let i = cexpr () in cexpect (P "]"); cexpect (P "="); let x = cexpr () in cexpect (P ";"); SStore (name, i, x)
      | t -> fail 2 "C: unexpected '%s' after %s" (show t) name)
  | t -> fail 2 "C: unexpected '%s' at a statement" (show t)

(* The enums (BF_ENGINE_x = n, BF_TILE_x = n, BF_HBM_x = n) and every engine
   function `static void bf_engine_NAME(...) { ... }`, by name. *)
let read_c text =
  ct := c_tokens text;
  let enums = Hashtbl.create 64 and funcs = ref [] in
  let n = Array.length !ct in
  let i = ref 0 in
  while !i < n do
    (match !ct.(!i) with
     | Id s when String.length s > 3 && String.sub s 0 3 = "BF_" && !i + 2 < n && !ct.(!i + 1) = P "=" ->
         (match !ct.(!i + 2) with Int v -> Hashtbl.replace enums s v | _ -> ())
     | Id s when String.length s > 10 && String.sub s 0 10 = "bf_engine_" && !i > 0 && !ct.(!i - 1) = Id "void" ->
         let j = ref (!i + 1) in
         while !j < n && !ct.(!j) <> P ")" do incr j done;
         cat := !j + 1;
         let body = cblock () in
         funcs := (String.sub s 10 (String.length s - 10), body) :: !funcs;
         i := !cat - 1
     | _ -> ());
    incr i
  done;
  (enums, !funcs)

exception Runtime of string

(* Floor division and its remainder, as the runtime's bfrt_div and bfrt_mod:
   the quotient rounds down, a / -1 is the wrapping negation, a % -1 is 0. *)
let floor_div a b =
  if b = 0L then raise (Runtime "division by zero");
  if b = -1L then Int64.neg a
  else
    let q = Int64.div a b in
    if Int64.rem a b <> 0L && (Int64.compare a 0L < 0) <> (Int64.compare b 0L < 0) then Int64.pred q else q

let floor_mod a b =
  if b = 0L then raise (Runtime "division by zero");
  if b = -1L then 0L
  else
    let r = Int64.rem a b in
    if r <> 0L && (Int64.compare r 0L < 0) <> (Int64.compare b 0L < 0) then Int64.add r b else r

(* A threshold as a count: counts stay far below 2^62. *)
let count_of t =
  if Int64.compare t (Int64.of_int max_int) > 0 || Int64.compare t (Int64.of_int min_int) < 0 then
    raise (Runtime (Printf.sprintf "threshold %Ld is outside OCaml's integers" t));
  Int64.to_int t

(* One engine function's run: for each op, the op, its line, its operands'
   values, and the waits evaluated since the previous op (producer, T). *)
let run_c enums params device body =
  let scalars = Hashtbl.create 64 and arrays = Hashtbl.create 16 in
  let truth b = if b then 1L else 0L in
  let enum s = match Hashtbl.find_opt enums s with Some v -> v | None -> raise (Runtime ("unknown name " ^ s)) in
  let rec ev = function
    | CInt v -> v
    | CFlt -> raise (Runtime "a real number in an integer expression")
    | CName ("bf_cx" | "bf_known") -> 0L
    | CName s when Hashtbl.mem scalars s -> Hashtbl.find scalars s
    | CName s -> enum s
    | CIndex ("bf_params", i) ->
        let i = Int64.to_int (ev i) in
        if i < 0 || i >= Array.length params then raise (Runtime "bf_params index out of range");
        params.(i)
    | CIndex (a, i) -> let arr, i = index a (ev i) in arr.(i)
    | CUn ("-", a) -> Int64.neg (ev a)
    | CUn (_, a) -> truth (ev a = 0L)
    | CBin ("&&", a, b) -> truth (ev a <> 0L && ev b <> 0L)
    | CBin ("||", a, b) -> truth (ev a <> 0L || ev b <> 0L)
    | CBin (op, a, b) -> (
        let x = ev a and y = ev b in
        let cmp = Int64.compare x y in
        match op with
        | "+" -> Int64.add x y | "-" -> Int64.sub x y | "*" -> Int64.mul x y
        | "<" -> truth (cmp < 0) | "<=" -> truth (cmp <= 0) | ">" -> truth (cmp > 0)
        | ">=" -> truth (cmp >= 0) | "==" -> truth (cmp = 0) | "!=" -> truth (cmp <> 0)
        | _ -> raise (Runtime ("operator " ^ op ^ " in an integer expression")))
    | CCond (c, a, b) -> if ev c <> 0L then ev a else ev b
    | CCall (f, args) -> call f args
  and call f args =
    match f, args with
    | "bf_add", [a; b] -> Int64.add (ev a) (ev b)
    | "bf_sub", [a; b] -> Int64.sub (ev a) (ev b)
    | "bf_mul", [a; b] -> Int64.mul (ev a) (ev b)
    | "bf_max", [a; b] -> let x = ev a and y = ev b in if Int64.compare x y >= 0 then x else y
    | "bf_trips", [lo; hi] -> let lo = ev lo and hi = ev hi in if Int64.compare hi lo > 0 then Int64.sub hi lo else 0L
    | "bf_mod", [a; b] -> floor_mod (ev a) (ev b)
    | "bfrt_div", [_; a; b; _] -> floor_div (ev a) (ev b)
    | "bfrt_mod", [_; a; b; _] -> floor_mod (ev a) (ev b)
    | "bfrt_elem", [_; t; r; c; _] -> device (Int64.to_int (ev t)) (ev r) (ev c)
    | "bfrt_hbm_row", [_; _; _; _; r; _; _] -> ev r
    | "bfrt_slot", [_; _; _; s; _] -> ev s
    | ("bfrt_view_at" | "bfrt_hbm_at"), [_; _; _; _; at; _; _] -> ev at
    | "bfrt_loop", [_; _; hi; _] -> ev hi
    | _ -> raise (Runtime (Printf.sprintf "%s with %d arguments in an integer expression" f (List.length args)))
  and index a i =
    match Hashtbl.find_opt arrays a with
    | None -> raise (Runtime ("unknown array " ^ a))
    | Some arr ->
        if Int64.compare i 0L < 0 || Int64.compare i (Int64.of_int (Array.length arr)) >= 0 then
          raise (Runtime "array index out of range");
        (arr, Int64.to_int i) in
  let ops = ref [] and pending = ref [] in
  let engine_arg x = match x with
    | CName s -> Int64.to_int (enum s)
    | _ -> raise (Runtime "a wait on an engine that is not a BF_ENGINE_ name") in
  let op name args =
    let letters = String.sub name 6 (String.length name - 6) in
    match args with
    | _ :: CName opname :: line :: rest when String.length opname > 5 && String.sub opname 0 5 = "BFRT_" ->
        let rec operands ls rest = match ls, rest with
          | [], [] -> []
          | 't' :: ls, t :: s :: rest -> OT (Int64.to_int (ev t), ev s) :: operands ls rest
          | 'h' :: ls, h :: r :: c :: rest -> OH (Int64.to_int (ev h), ev r, ev c) :: operands ls rest
          | 'v' :: ls, t :: s :: r :: rn :: c :: cn :: rest ->
              OV (Int64.to_int (ev t), ev s, [ (ev r, ev rn); (ev c, ev cn) ]) :: operands ls rest
          | 's' :: ls, h :: r :: rn :: c :: cn :: rest ->
              OS (Int64.to_int (ev h), [ (ev r, ev rn); (ev c, ev cn) ]) :: operands ls rest
          | 'f' :: ls, _ :: rest -> OF :: operands ls rest
          | _ -> raise (Runtime (name ^ ": arguments do not fit its letters")) in
        let opnds = operands (List.init (String.length letters) (String.get letters)) rest in
        ops := (String.sub opname 5 (String.length opname - 5), Int64.to_int (ev line), opnds, List.rev !pending) :: !ops;
        pending := []
    | _ -> raise (Runtime (name ^ ": not an op call")) in
  let rec exec = function
    | SNop -> ()
    | SDecl (v, x) | SAssign (v, x) -> Hashtbl.replace scalars v (ev x)
    | SArray (a, len) ->
        let n = ev len in
        if Int64.compare n 0L < 0 || Int64.compare n 100_000_000L > 0 then raise (Runtime "bad array length");
        Hashtbl.replace arrays a (Array.make (Int64.to_int n) 0L)
    | SStore (a, i, x) -> let arr, i = index a (ev i) in arr.(i) <- ev x
    | SLoop (v, lo, e, hi, body) ->
        let i = ref (ev lo) in
        let hi = ev hi in
        Hashtbl.replace scalars e hi;
        while Int64.compare !i hi < 0 do
          Hashtbl.replace scalars v !i; List.iter exec body; i := Int64.succ !i
        done
    | SCond (c, t, f) -> List.iter exec (if ev c <> 0L then t else f)
    | SCall (("bf_wait" | "bf_wait_s"), _ :: e :: _ :: t :: _) ->
        pending := (engine_arg e, count_of (ev t)) :: !pending
    | SCall (("bfrt_bookkeep" | "bfrt_spill"), _) -> ()
    | SCall ("bfrt_barrier", _) | SCall ("bf_forget", _) -> raise (Runtime "a barrier in a barrier-free stream")
    | SCall (f, args) when String.length f > 6 && String.sub f 0 6 = "bf_op_" -> op f args
    | SCall (f, _) -> raise (Runtime ("unknown call " ^ f)) in
  List.iter exec body;
  if !pending <> [] then raise (Runtime "waits after the last op");
  List.rev !ops

(* ---- bfcheck --extend: lines `B seen raw got` on stdin, got being what
   the runtime's bfrt_counter_extend returned; each must equal the
   extracted Narrow.extend (proved exact in the window: extend_exact). *)

let check_extend () =
  let cases = ref 0 and bad = ref 0 in
  (try
     while true do
       let line = input_line stdin in
       match List.map int_of_string_opt (List.filter (( <> ) "") (String.split_on_char ' ' line)) with
       | [Some b; Some seen; Some raw; Some got] when b >= 1 ->
           incr cases;
           let want = int_of_z (extend b (z_of_int seen) (z_of_int raw)) in
           if want <> got then begin
             incr bad;
             Printf.eprintf "bfcheck: extend %d bits from %d, raw %d: the runtime gives %d, the proof's extend %d\n" b seen raw got want
           end
       | _ -> fail 2 "--extend: expected `B seen raw extended`, not '%s'" line
     done
   with End_of_file -> ());
  Printf.printf "extend: %d cases, %d disagreements\n" !cases !bad;
  exit (if !bad > 0 || !cases = 0 then 1 else 0)

(* ---- The comparison. *)

let () =
  if Array.length Sys.argv = 2 && Sys.argv.(1) = "--extend" then check_extend ();
  if Array.length Sys.argv < 3 then fail 2 "usage: bfcheck DUMP CFILE [NAME=VALUE ...] | bfcheck --extend";
  let path = Sys.argv.(1) in
  let text = read_file path in
  tokens := Array.of_list (List.filter (( <> ) "") (String.split_on_char ' '
             (String.map (fun c -> if c = '\n' || c = '\t' then ' ' else c) text)));
  expect "bfsync-proof"; expect "2"; expect "params";
  let names = Array.init (int ()) (fun _ -> next ()) in
  let params = Array.make (Array.length names) 0L in
  let bound = Array.make (Array.length names) false in
  for a = 3 to Array.length Sys.argv - 1 do
    match String.split_on_char '=' Sys.argv.(a) with
    | [ n; v ] -> (
        let rec find i = if i = Array.length names then fail 2 "no parameter '%s'" n
                         else if names.(i) = n then i else find (i + 1) in
        let i = find 0 in
        match Int64.of_string_opt v with
        | Some v -> params.(i) <- v; bound.(i) <- true
        | None -> fail 2 "bad value in '%s'" Sys.argv.(a))
    | _ -> fail 2 "expected NAME=VALUE, not '%s'" Sys.argv.(a)
  done;
  Array.iteri (fun i b -> if not b then fail 2 "parameter %s has no value" names.(i)) bound;
  expect "engines";
  let ne = int () in
  let engine_names = Array.init ne (fun _ -> next ()) in
  expect "bits";
  let bits = int () in
  if bits < 1 || bits > 64 then fail 2 "bad counter width %d" bits;
  expect "tiles";
  ntiles := int ();
  shapes := Array.init !ntiles (fun _ -> let r = int () in (r, int ()));
  expect "tensors";
  let ntensors = int () in
  let device = Array.make ntensors None in
  while peek () = "device" do
    ignore (next ());
    let t = int () in
    let rows = int () in
    let cols = int () in
    if t < 0 || t >= ntensors || rows < 0 || cols < 0 || rows * cols > 100_000_000 then fail 2 "bad device entry for tensor %d" t;
    device.(t) <- Some (rows, cols, Array.init (rows * cols) (fun _ -> int64 ()))
  done;
  let dev_read t r c =
    match (if t >= 0 && t < ntensors then device.(t) else None) with
    | None -> raise (Runtime (Printf.sprintf "tensor %d has no device values in the dump" t))
    | Some (rows, cols, v) ->
        if Int64.compare r 0L < 0 || Int64.compare r (Int64.of_int rows) >= 0
           || Int64.compare c 0L < 0 || Int64.compare c (Int64.of_int cols) >= 0 then
          raise (Runtime (Printf.sprintf "element [%Ld, %Ld] of tensor %d is out of bounds" r c t));
        v.((Int64.to_int r * cols) + Int64.to_int c) in
  expect "kernel";
  let prog = block () in
  expect "end";
  (* the emitted C, engine by engine *)
  let cpath = Sys.argv.(2) in
  let enums, funcs = read_c (read_file cpath) in
  let streams = Array.make ne [] in
  List.iter (fun (name, body) ->
      let e = match Hashtbl.find_opt enums ("BF_ENGINE_" ^ name) with
        | Some e when Int64.compare e 0L >= 0 && Int64.compare e (Int64.of_int ne) < 0 -> Int64.to_int e
        | _ -> fail 2 "%s: engine function bf_engine_%s names no engine" cpath name in
      streams.(e) <- (try run_c enums params dev_read body
                      with Runtime m -> fail 1 "%s: engine %s: %s" cpath engine_names.(e) m))
    funcs;
  (* the model, with the same device values (the model reads 0 outside a
     tensor, where run stops with an error: no such run is compared) *)
  let dev_z t r c =
    let r = int_of_z r and c = int_of_z c in
    try z_of_int64 (dev_read t (Int64.of_int r) (Int64.of_int c)) with Runtime _ -> Z0 in
  let penv = { par = (fun n -> if n < Array.length params then z_of_int64 params.(n) else Z0); dev = dev_z } in
  let model = bf_thresholds ne penv prog and trace = Array.of_list (bf_trace penv prog) in
  let instances = Array.length trace and waits = ref 0 and exact = ref 0 and early = ref 0 and late = ref 0
  and implied = ref 0 and bad = ref 0 in
  let report fmt = incr bad; Printf.ksprintf prerr_endline fmt in
  (* per engine, the model's instances in order: (index in the trace, id, needs) *)
  let per_engine = Array.make ne [] in
  List.iteri (fun k (id, ts) ->
      let e = Hashtbl.find engine_of id in
      if e < 0 || e >= ne then fail 2 "instruction %d is on engine %d, not one of the %d" id e ne;
      per_engine.(e) <- (k, id, ts) :: per_engine.(e))
    model;
  let by_index = Array.make instances [] in
  for c = 0 to ne - 1 do
    let m = List.rev per_engine.(c) and s = streams.(c) in
    if List.length m <> List.length s then
      report "%s: engine %s runs %d ops, the model's trace has %d of its instances" cpath engine_names.(c) (List.length s) (List.length m)
    else
      List.iteri (fun j ((k, id, ts), (op, line, opnds, ws)) ->
          let mop, mline = Hashtbl.find instr_of id in
          (* the region as Extract.eval_rect computes it, in Z *)
          let mk res w ds =
            ((res, w), List.map (fun (lo, u, n) -> let a = Z.mul (z_of_int64 lo) (z_of_int u) in (a, Z.add a (z_of_int64 n))) ds) in
          let keys = accesses op opnds ~const:Int64.of_int ~unit:Int64.to_int mk in
          if op <> mop || line <> mline then
            report "%s: engine %s op %d is %s (line %d), the model's instance %d is %s (line %d)" cpath engine_names.(c) (j + 1) op line k mop mline
          else if keys <> trace.(k).ikeys then
            report "%s: engine %s op %d (%s, line %d): its operands are not the model's" cpath engine_names.(c) (j + 1) op line
          else begin
            by_index.(k) <- List.map (fun (f, t) -> (f, z_of_int t)) ws;
            List.iter (fun (f, t) ->
                incr waits;
                match List.assoc_opt f ts with
                | None -> report "%s: engine %s op %d (line %d) waits on its own engine" cpath engine_names.(c) (j + 1) line
                | Some need ->
                    let need = int_of_z need in
                    if t = need then incr exact
                    else begin
                      if t < need then incr early else incr late;
                      report "%s: engine %s op %d (%s, line %d): wait S_%s >= %d, need = %d" cpath engine_names.(c) (j + 1) op line
                        engine_names.(f) t need
                    end)
              ws;
            List.iter (fun (f, need) -> if int_of_z need > 0 && not (List.exists (fun (g, _) -> g = f) ws) then incr implied) ts
          end)
        (List.combine m s)
  done;
  let validated = !bad = 0 && bf_validate ne penv prog (fun k -> if k < instances then by_index.(k) else []) in
  if !bad = 0 && not validated then
    report "%s: the validator rejects the emitted waits (a need is not implied, or a wait asks for more than its instance needs)" cpath;
  (* Pipeline.pipeline_narrow_unwrapped: while no engine runs 2^bits ops,
     a B-bit counter never wraps and a pipelined queue's theorems hold on
     B bits unchanged *)
  let unwrapped = bits >= 62 || Array.for_all (fun l -> List.length l < 1 lsl bits) per_engine in
  Printf.printf "%s: instances %d waits %d exact %d early %d late %d needs-without-wait %d validated %s disagreements %d unwrapped %s\n"
    cpath instances !waits !exact !early !late !implied (if validated then "yes" else "no") !bad
    (if unwrapped then "yes" else "no");
  exit (if !bad > 0 then 1 else 0)

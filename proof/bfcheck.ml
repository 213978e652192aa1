(* bfcheck.ml: the differential check between the proof and bfsync.

   Usage: bfcheck DUMP [NAME=VALUE ...], or bfcheck --extend (below)
   DUMP is `bfsync compile --emit=proof FILE` (transform/ir_dump.c has the
   grammar): the kernel in the proof's model, then bfsync's per-engine
   streams. bfcheck

   - rebuilds the kernel as a value of the Coq model and runs the threshold
     function extracted from Coq (thresholds.ml, from Extract.v), which
     Extract.bf_exactness proves equal to need_f of every instance;
   - interprets each engine's stream on its own (every value a wait
     threshold, store or loop bound reads is the engine's own: parameters,
     loop variables, its scalars and arrays), recording the waits evaluated
     before each op;
   - checks that engine c's k-th op is the model trace's k-th c-instance
     (the streams are the trace's projections, as Machine.v assumes), and
     that every evaluated wait `S_f >= T` before an instance has T equal to
     the extracted need_f, or at least need_f for a wait whose WaitWhy names
     a fallback (hbm tracked per tensor across DMA queues: late by design);
   - runs the extracted validator (Validate.v) on exactly the waits the
     streams evaluate: if it accepts, Extract.bf_validated_soundness and
     bf_validated_progress say the machine running those waits, dropped
     ones included, is sound and cannot deadlock. Every wait it accepts is
     on another engine of the machine, and is a wait node of its stream, so
     the counters a stream waits on are those its tracks bits name
     (ir_tracks, less its own engine, as runtime/host.c builds consumers):
     the hypothesis of bf_validated_narrow_soundness and
     bf_validated_narrow_progress (B-bit counters, Narrow.v) holds too.

   It prints one summary line, and exits 0 if every wait agrees, 1 on a
   disagreement or a run-time error in a stream, 2 on bad input. This file
   is trusted glue: it parses, interprets and compares, and decides no
   threshold itself. *)
open Thresholds

let fail code fmt = Printf.ksprintf (fun s -> prerr_endline ("bfcheck: " ^ s); exit code) fmt

(* ---- Integers to and from Coq's binary Z. *)

let rec pos_of_int n =
  if n = 1 then XH else if n land 1 = 0 then XO (pos_of_int (n lsr 1)) else XI (pos_of_int (n lsr 1))

let z_of_int n = if n = 0 then Z0 else if n > 0 then Zpos (pos_of_int n) else Zneg (pos_of_int (-n))

let rec int_of_pos = function XH -> 1 | XO p -> 2 * int_of_pos p | XI p -> (2 * int_of_pos p) + 1

let int_of_z = function Z0 -> 0 | Zpos p -> int_of_pos p | Zneg p -> -int_of_pos p

(* ---- Tokens. *)

let tokens = ref [||]
let at = ref 0

let next () =
  if !at >= Array.length !tokens then fail 2 "unexpected end of dump";
  incr at;
  !tokens.(!at - 1)

let int () =
  let t = next () in
  match int_of_string_opt t with Some n -> n | None -> fail 2 "expected an integer, not '%s'" t

let expect w = let t = next () in if t <> w then fail 2 "expected '%s', not '%s'" w t

(* items until "}" (the "{" already read) *)
let rec items item = if !tokens.(!at) = "}" then (incr at; []) else let x = item () in x :: items item

(* ---- The kernel, as the model's values. *)

let rec expr () =
  let bin f = let a = expr () in let b = expr () in f a b in
  match next () with
  | "k" -> EConst (z_of_int (int ()))
  | "p" -> EParam (int ())
  | "v" -> EVar (int ())
  | "neg" -> ENeg (expr ())
  | "add" -> bin (fun a b -> EAdd (a, b))
  | "sub" -> bin (fun a b -> ESub (a, b))
  | "mul" -> bin (fun a b -> EMul (a, b))
  | "div" -> bin (fun a b -> EDiv (a, b))
  | "mod" -> bin (fun a b -> EMod (a, b))
  | "max" -> bin (fun a b -> EMax (a, b))
  | t -> fail 2 "unknown expression '%s'" t

let engine_of = Hashtbl.create 64 (* instruction id -> engine *)

let access () =
  let ares = int () in
  let awrite = int () <> 0 in
  let arow = expr () in
  let arows = z_of_int (int ()) in
  let acol = expr () in
  let acols = z_of_int (int ()) in
  { ares; awrite; arow; arows; acol; acols }

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
      let n = int () in
      Hashtbl.replace engine_of id e;
      SInstr (id, e, List.init n (fun _ -> access ()))
  | t -> fail 2 "unknown statement '%s'" t

(* ---- bfsync's streams, and an interpreter for one of them. *)

type ix = K of int | P of int | V of int | X of int | Ld of int * ix | Bin of string * ix * ix
        | Not of ix | Sel of ix * ix * ix

type node =
  | Op of int
  | Wait of int * bool * ix
  | Set of int * ix
  | Store of int * ix * ix
  | Loop of int * ix * ix * node list
  | Barrier
  | If of ix * node list * node list

let rec ix () =
  match next () with
  | "k" -> K (int ())
  | "p" -> P (int ())
  | "v" -> V (int ())
  | "x" -> X (int ())
  | "ld" -> let a = int () in Ld (a, ix ())
  | ("add" | "sub" | "mul" | "div" | "mod" | "max" | "trips"
    | "lt" | "le" | "gt" | "ge" | "eq" | "ne" | "and" | "or") as op -> let a = ix () in let b = ix () in Bin (op, a, b)
  | "not" -> Not (ix ())
  | "sel" -> let c = ix () in let a = ix () in let b = ix () in Sel (c, a, b)
  | t -> fail 2 "unknown IR expression '%s'" t

let rec nodes () = expect "{"; items node

and node () =
  match next () with
  | "op" -> Op (int ())
  | "wait" -> let e = int () in let fb = int () <> 0 in Wait (e, fb, ix ())
  | "set" -> let v = int () in Set (v, ix ())
  | "store" -> let a = int () in let i = ix () in Store (a, i, ix ())
  | "loop" -> let l = int () in let lo = ix () in let hi = ix () in Loop (l, lo, hi, nodes ())
  | "barrier" -> Barrier
  | "if" -> let c = ix () in let t = nodes () in If (c, t, nodes ())
  | t -> fail 2 "unknown IR node '%s'" t

exception Runtime of string

let floor_div a b =
  if b = 0 then raise (Runtime "division by zero");
  let q = a / b in
  if a mod b <> 0 && (a < 0) <> (b < 0) then q - 1 else q

(* One engine's run: for each op, its instruction and the waits evaluated
   since the previous op (producer, threshold, fallback). *)
let run_stream params nvars lengths body =
  let loopvars = Hashtbl.create 8 and vars = Array.make nvars 0 in
  let rec ev = function
    | K n -> n
    | P i -> params.(i)
    | V l -> (match Hashtbl.find_opt loopvars l with Some v -> v | None -> 0)
    | X v -> vars.(v)
    | Ld (a, i) -> load a (ev i)
    | Not a -> if ev a = 0 then 1 else 0
    | Sel (c, a, b) -> if ev c <> 0 then ev a else ev b
    | Bin ("and", a, b) -> if ev a <> 0 && ev b <> 0 then 1 else 0
    | Bin ("or", a, b) -> if ev a <> 0 || ev b <> 0 then 1 else 0
    | Bin (op, a, b) -> (
        let x = ev a and y = ev b in
        match op with
        | "add" -> x + y | "sub" -> x - y | "mul" -> x * y
        | "div" -> floor_div x y | "mod" -> x - (y * floor_div x y)
        | "trips" -> if y > x then y - x else 0
        | "lt" -> Bool.to_int (x < y) | "le" -> Bool.to_int (x <= y) | "gt" -> Bool.to_int (x > y)
        | "ge" -> Bool.to_int (x >= y) | "eq" -> Bool.to_int (x = y) | "ne" -> Bool.to_int (x <> y)
        | _ -> max x y)
  and arrays = lazy (Array.of_list (List.map (fun l -> Array.make (max 0 (ev l)) 0) lengths))
  and load a i =
    let arr = (Lazy.force arrays).(a) in
    if i < 0 || i >= Array.length arr then raise (Runtime "array index out of range");
    arr.(i)
  in
  let ops = ref [] and pending = ref [] in
  let rec exec = function
    | Op id -> ops := (id, List.rev !pending) :: !ops; pending := []
    | Wait (e, fb, t) -> pending := (e, ev t, fb) :: !pending
    | Set (v, x) -> vars.(v) <- ev x
    | Store (a, i, x) ->
        let arr = (Lazy.force arrays).(a) and i = ev i in
        if i < 0 || i >= Array.length arr then raise (Runtime "array index out of range");
        arr.(i) <- ev x
    | Loop (l, lo, hi, body) ->
        let lo = ev lo and hi = ev hi in
        for i = lo to hi - 1 do Hashtbl.replace loopvars l i; List.iter exec body done
    | Barrier -> raise (Runtime "a barrier in a barrier-free stream")
    | If (c, t, e) -> List.iter exec (if ev c <> 0 then t else e)
  in
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
  if Array.length Sys.argv < 2 then fail 2 "usage: bfcheck DUMP [NAME=VALUE ...] | bfcheck --extend";
  let path = Sys.argv.(1) in
  let text =
    try let ic = open_in_bin path in
        let t = really_input_string ic (in_channel_length ic) in close_in ic; t
    with Sys_error m -> fail 2 "%s" m in
  tokens := Array.of_list (List.filter (( <> ) "") (String.split_on_char ' '
             (String.map (fun c -> if c = '\n' || c = '\t' then ' ' else c) text)));
  expect "bfsync-proof"; expect "1"; expect "params";
  let names = Array.init (int ()) (fun _ -> next ()) in
  let params = Array.make (Array.length names) 0 in
  let bound = Array.make (Array.length names) false in
  for a = 2 to Array.length Sys.argv - 1 do
    match String.split_on_char '=' Sys.argv.(a) with
    | [ n; v ] -> (
        let rec find i = if i = Array.length names then fail 2 "no parameter '%s'" n
                         else if names.(i) = n then i else find (i + 1) in
        let i = find 0 in
        match int_of_string_opt v with
        | Some v -> params.(i) <- v; bound.(i) <- true
        | None -> fail 2 "bad value in '%s'" Sys.argv.(a))
    | _ -> fail 2 "expected NAME=VALUE, not '%s'" Sys.argv.(a)
  done;
  Array.iteri (fun i b -> if not b then fail 2 "parameter %s has no value" names.(i)) bound;
  expect "engines";
  let ne = int () in
  expect "kernel";
  let prog = block () in
  let streams = Array.make ne [] in
  let rec read_streams () =
    match next () with
    | "stream" ->
        let e = int () in
        expect "vars"; let nvars = int () in
        expect "arrays"; let narrays = int () in
        let lengths = List.init narrays (fun _ -> ix ()) in
        let body = nodes () in
        streams.(e) <- (try run_stream params nvars lengths body
                        with Runtime m -> fail 1 "%s: engine %d: %s" path e m);
        read_streams ()
    | "end" -> ()
    | t -> fail 2 "expected 'stream' or 'end', not '%s'" t
  in
  read_streams ();
  let penv n = if n < Array.length params then z_of_int params.(n) else Z0 in
  let model = bf_thresholds ne penv prog in
  let per_engine = Array.make ne [] in
  List.iter (fun (id, ts) -> let e = Hashtbl.find engine_of id in per_engine.(e) <- (id, ts) :: per_engine.(e))
    (List.rev model);
  let instances = List.length model and waits = ref 0 and exact = ref 0 and conservative = ref 0
  and implied = ref 0 and bad = ref 0 in
  let report fmt = incr bad; Printf.ksprintf prerr_endline fmt in
  for c = 0 to ne - 1 do
    let m = per_engine.(c) and s = streams.(c) in
    if List.length m <> List.length s then
      report "%s: engine %d runs %d ops, the model's trace has %d of its instances" path c (List.length s) (List.length m)
    else
      List.iteri (fun k ((mid, ts), (sid, ws)) ->
          if mid <> sid then report "%s: engine %d op %d is instruction %d, the model says %d" path c (k + 1) sid mid
          else begin
            List.iter (fun (f, t, fb) ->
                incr waits;
                match List.assoc_opt f ts with
                | None -> report "%s: engine %d op %d (instruction %d) waits on engine %d, which the model has no need on" path c (k + 1) sid f
                | Some need ->
                    let need = int_of_z need in
                    if t = need then incr exact
                    else if fb && t > need then incr conservative
                    else report "%s: engine %d op %d (instruction %d): wait S_%d >= %d, need_%d = %d%s" path c (k + 1) sid f t f need (if fb then " (fallback)" else ""))
              ws;
            List.iter (fun (f, need) -> if int_of_z need > 0 && not (List.exists (fun (g, _, _) -> g = f) ws) then incr implied) ts
          end)
        (List.combine m s)
  done;
  (* the waits before each instance of the trace, by its index *)
  let by_index = Array.make instances [] and seen = Array.make ne 0 in
  List.iteri (fun k (id, _) ->
      let c = Hashtbl.find engine_of id in
      (match List.nth_opt streams.(c) seen.(c) with
       | Some (_, ws) -> by_index.(k) <- List.map (fun (f, t, _) -> (f, z_of_int t)) ws
       | None -> ());
      seen.(c) <- seen.(c) + 1)
    model;
  let validated = bf_validate ne penv prog (fun k -> if k < instances then by_index.(k) else []) in
  if not validated then report "%s: the validator rejects the streams' waits (a need is not implied, or a wait asks for a later instance)" path;
  Printf.printf "%s: instances %d waits %d exact %d conservative %d needs-without-wait %d validated %s disagreements %d\n"
    path instances !waits !exact !conservative !implied (if validated then "yes" else "no") !bad;
  exit (if !bad > 0 then 1 else 0)

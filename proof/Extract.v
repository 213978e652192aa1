(* Extract.v: the threshold function for bfsync's conflicts, extracted to
   OCaml (bfcheck.ml runs it against bfsync's own streams).

   The keys are bfsync's regions: an access is a resource (a tile, or an
   hbm tensor numbered after the tiles), a write flag and a rectangle
   [row * rows, row * rows + rows) x [col * cols, col * cols + cols) of
   that resource; a tile slot s is the rectangle [s, s + 1) x [0, 1). Two
   accesses conflict when they touch the same resource, one of them
   writes, and the rectangles overlap: the relation transform/deps.c and
   the oracle decide. bf_exactness is Exactness for exactly the function
   extracted. Narrow.extend is extracted too, for bfcheck --extend to
   compare with the runtime's bfrt_counter_extend. *)
From Coq Require Import ZArith List Bool Arith Lia.
From Coq Require Extraction ExtrOcamlBasic ExtrOcamlNatInt.
Import ListNotations.
From BF Require Import Model Transform Machine Narrow Validate.
Open Scope Z_scope.

Record access := Access { ares : nat; awrite : bool; arow : expr; arows : Z; acol : expr; acols : Z }.

Definition rect := (nat * bool * Z * Z * Z * Z)%type.

Definition eval_rect (p : penv) (v : env) (a : access) : rect :=
  let r := eval p v (arow a) * arows a in
  let c := eval p v (acol a) * acols a in
  (ares a, awrite a, r, r + arows a, c, c + acols a).

Definition rect_conflict (x y : rect) : bool :=
  let '(rx, wx, x0, x1, y0, y1) := x in
  let '(ry, wy, u0, u1, v0, v1) := y in
  Nat.eqb rx ry && (wx || wy) && (x0 <? u1) && (u0 <? x1) && (y0 <? v1) && (v0 <? y1).

Definition rect_eqb (x y : rect) : bool :=
  let '(rx, wx, x0, x1, y0, y1) := x in
  let '(ry, wy, u0, u1, v0, v1) := y in
  Nat.eqb rx ry && Bool.eqb wx wy && (x0 =? u0) && (x1 =? u1) && (y0 =? v0) && (y1 =? v1).

Lemma rect_eqb_eq : forall a b, rect_eqb a b = true -> a = b.
Proof.
  intros [[[[[rx wx] x0] x1] y0] y1] [[[[[ry wy] u0] u1] v0] v1] H. simpl in H.
  repeat rewrite andb_true_iff in H.
  destruct H as [[[[[H1 H2] H3] H4] H5] H6].
  apply Nat.eqb_eq in H1. apply Bool.eqb_prop in H2.
  apply Z.eqb_eq in H3. apply Z.eqb_eq in H4. apply Z.eqb_eq in H5. apply Z.eqb_eq in H6.
  subst. reflexivity.
Qed.

(* The thresholds of kernel prog on a machine with engines 0 .. ne - 1. *)
Definition bf_thresholds (ne : nat) (p : penv) (prog : block access) : list out :=
  thresholds access rect eval_rect rect_conflict (seq 0 ne) rect_eqb p prog.

Theorem bf_exactness : forall ne p prog,
  bf_thresholds ne p prog =
  spec rect rect_conflict (seq 0 ne) [] (trace access rect eval_rect p prog).
Proof. intros. apply exactness. exact rect_eqb_eq. Qed.

(* need_f of the k-th instance, from the threshold function's output
   (bf_exactness: they are the needs), computed once per kernel. *)
Definition out_need (o : option out) (f : nat) : Z :=
  match o with
  | Some (_, ws) => match find (fun w => Nat.eqb (fst w) f) ws with Some (_, z) => z | None => 0 end
  | None => 0
  end.

Definition bf_needs (ne : nat) (p : penv) (prog : block access) : nat -> nat -> Z :=
  let outs := bf_thresholds ne p prog in fun k => let o := nth_error outs k in fun f => out_need o f.

Lemma find_map_in : forall (F : nat -> Z) f l, In f l ->
  find (fun w => Nat.eqb (fst w) f) (map (fun g => (g, F g)) l) = Some (f, F f).
Proof.
  induction l as [|g r IH]; simpl; intros H; [contradiction|].
  destruct (Nat.eqb g f) eqn:E; [apply Nat.eqb_eq in E; subst; reflexivity|].
  apply Nat.eqb_neq in E. destruct H as [H|H]; [congruence | apply IH; exact H].
Qed.

Lemma bf_needs_ok : forall ne p prog k xk f,
  nth_error (trace access rect eval_rect p prog) k = Some xk -> f <> ieng rect xk -> (f < ne)%nat ->
  bf_needs ne p prog k f =
  need rect rect_conflict (firstn k (trace access rect eval_rect p prog)) f (ikeys rect xk).
Proof.
  intros ne p prog k xk f Hk Hf Hl. unfold bf_needs, bf_thresholds.
  rewrite (exactness_nth access rect eval_rect rect_conflict (seq 0 ne) rect_eqb rect_eqb_eq p prog k xk Hk).
  unfold out_need. rewrite find_map_in; [reflexivity|].
  unfold others. apply filter_In. split; [apply in_seq; lia|].
  apply negb_true_iff, Nat.eqb_neq. exact Hf.
Qed.

(* The checker of bfsync's own waits: w k is the list of waits bfsync's
   streams evaluate before the k-th instance of the trace. *)
Definition bf_validate (ne : nat) (p : penv) (prog : block access) (w : nat -> list (nat * Z)) : bool :=
  check rect (trace access rect eval_rect p prog) w ne (bf_needs ne p prog).

Theorem bf_validated_soundness : forall ne p prog w, bf_validate ne p prog w = true ->
  forall st c st', reachable rect (trace access rect eval_rect p prog) w st ->
  step rect (trace access rect eval_rect p prog) w st c st' ->
  forall k xk, nth_error (groups rect (trace access rect eval_rect p prog) c) (done st c) = Some k ->
  passed st c = length (w k) -> nth_error (trace access rect eval_rect p prog) k = Some xk ->
  forall j x, (j < k)%nat -> nth_error (trace access rect eval_rect p prog) j = Some x ->
  ieng rect x <> c -> conflict rect rect_conflict (ikeys rect x) (ikeys rect xk) = true ->
  completed rect (trace access rect eval_rect p prog) st j.
Proof. intros ne p prog w V. exact (check_soundness rect rect_conflict _ w ne _ (bf_needs_ok ne p prog) V). Qed.

Theorem bf_validated_progress : forall ne p prog w, bf_validate ne p prog w = true ->
  forall st, reachable rect (trace access rect eval_rect p prog) w st ->
  forall c k, nth_error (groups rect (trace access rect eval_rect p prog) c) (done st c) = Some k ->
  exists c' st', step rect (trace access rect eval_rect p prog) w st c' st'.
Proof. intros ne p prog w V. exact (check_progress rect rect_conflict _ w ne _ (bf_needs_ok ne p prog) V). Qed.

(* Accepted waits are exact: never early (bf_validated_soundness) and never
   late (each wait holds once the instances its instance conflicts with on
   that engine have completed). *)
Theorem bf_validated_exact : forall ne p prog w, bf_validate ne p prog w = true ->
  forall st k xk f T, nth_error (trace access rect eval_rect p prog) k = Some xk -> In (f, T) (w k) ->
  (forall j x, (j < k)%nat -> nth_error (trace access rect eval_rect p prog) j = Some x -> ieng rect x = f ->
     conflict rect rect_conflict (ikeys rect x) (ikeys rect xk) = true ->
     completed rect (trace access rect eval_rect p prog) st j) ->
  T <= Z.of_nat (done st f).
Proof. intros ne p prog w V. exact (proj2 (check_exact rect rect_conflict _ w ne _ (bf_needs_ok ne p prog) V)). Qed.

(* The same on B-bit counters: the extended read of a tracked counter is
   the whole count (Narrow.read_exact), so each accepted wait passes on B
   bits as soon as what its instance needs on that engine has completed. *)
Theorem bf_validated_narrow_exact : forall ne p prog w B tracks, bf_validate ne p prog w = true ->
  (1 <= B)%nat ->
  (forall c g k i f T, nth_error (groups rect (trace access rect eval_rect p prog) c) g = Some k ->
     nth_error (w k) i = Some (f, T) -> tracks c f = true) ->
  forall st, nreachable rect (trace access rect eval_rect p prog) w B tracks st ->
  forall c g k xk i f T, nth_error (groups rect (trace access rect eval_rect p prog) c) g = Some k ->
  nth_error (trace access rect eval_rect p prog) k = Some xk -> nth_error (w k) i = Some (f, T) ->
  (forall j x, (j < k)%nat -> nth_error (trace access rect eval_rect p prog) j = Some x -> ieng rect x = f ->
     conflict rect rect_conflict (ikeys rect x) (ikeys rect xk) = true ->
     completed rect (trace access rect eval_rect p prog) (ms st) j) ->
  T <= extend B (seen st c f) (raw B st f).
Proof.
  intros ne p prog w B tracks V HB Ht st R c g k xk i f T Hg Hk Hi Hdone.
  rewrite (read_exact _ _ w B tracks HB Ht st c f R (Ht c g k i f T Hg Hi)). unfold count.
  exact (bf_validated_exact ne p prog w V (ms st) k xk f T Hk (nth_error_In _ _ Hi) Hdone).
Qed.

(* The same for B-bit counters, read by extension, with back-pressure
   (Narrow.v), when the tracks table covers every counter a stream waits
   on and names only the machine's engines: every reachable state of the
   narrow machine running bfsync's waits is sound, and one with work left
   can step. *)
Theorem bf_validated_narrow_soundness : forall ne p prog w B tracks, bf_validate ne p prog w = true ->
  (1 <= B)%nat ->
  (forall c g k i f T, nth_error (groups rect (trace access rect eval_rect p prog) c) g = Some k ->
     nth_error (w k) i = Some (f, T) -> tracks c f = true) ->
  forall st, nreachable rect (trace access rect eval_rect p prog) w B tracks st ->
  forall c k xk, nth_error (groups rect (trace access rect eval_rect p prog) c) (done (ms st) c) = Some k ->
  passed (ms st) c = length (w k) -> nth_error (trace access rect eval_rect p prog) k = Some xk ->
  forall j x, (j < k)%nat -> nth_error (trace access rect eval_rect p prog) j = Some x ->
  ieng rect x <> c -> conflict rect rect_conflict (ikeys rect x) (ikeys rect xk) = true ->
  completed rect (trace access rect eval_rect p prog) (ms st) j.
Proof.
  intros ne p prog w B tracks V HB Ht st R c k xk Hg Hp.
  exact (check_soundness rect rect_conflict _ w ne _ (bf_needs_ok ne p prog) V (ms st) c _ (narrow_refines _ _ w B tracks HB Ht st R)
           (StepOp _ _ w (ms st) c k Hg Hp) k xk Hg Hp).
Qed.

Theorem bf_validated_narrow_progress : forall ne p prog w B tracks, bf_validate ne p prog w = true ->
  (1 <= B)%nat ->
  (forall c g k i f T, nth_error (groups rect (trace access rect eval_rect p prog) c) g = Some k ->
     nth_error (w k) i = Some (f, T) -> tracks c f = true) ->
  (forall c e, tracks c e = true -> (c < ne)%nat) ->
  forall st, nreachable rect (trace access rect eval_rect p prog) w B tracks st ->
  forall c k, nth_error (groups rect (trace access rect eval_rect p prog) c) (done (ms st) c) = Some k ->
  exists c' st', nstep rect (trace access rect eval_rect p prog) w B tracks st c' st'.
Proof.
  intros ne p prog w B tracks V HB Ht Hne.
  apply (narrow_progress _ _ w B tracks HB Ht (seq 0 ne)).
  - intros c e H. apply in_seq. specialize (Hne c e H). lia.
  - exact (check_earlier rect rect_conflict _ w ne _ (bf_needs_ok ne p prog) V).
Qed.

(* The trace itself, for bfcheck to compare each op the emitted C runs with
   the instance of the model at its place. *)
Definition bf_trace (p : penv) (prog : block access) : list (inst rect) := trace access rect eval_rect p prog.

Extraction Language OCaml.
Extraction "thresholds.ml" bf_thresholds bf_validate bf_trace extend.

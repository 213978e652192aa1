(* Extract.v: the threshold function for bfsync's conflicts, extracted to
   OCaml (bfcheck.ml runs it against bfsync's own streams).

   The keys are bfsync's regions: an access is a resource (a tile, or an
   hbm tensor numbered after the tiles), a write flag and a box, one
   half-open interval per dimension: a tile's slot, partitions and
   columns (a whole slot or a view x[p0:p1, f0:f1], ragged or not), an
   hbm tensor's rows and columns (a tile X[r, c] in units of its shape,
   or an element slice X[r0:r1, c0:c1]). Two accesses conflict when they
   touch the same resource, one of them writes, and the boxes share an
   element (rect_conflict_iff): the relation transform/deps.c and the
   oracle decide. bf_exactness is Exactness for exactly the function
   extracted. Narrow.extend is extracted too, for bfcheck --extend to
   compare with the runtime's bfrt_counter_extend. *)
From Coq Require Import ZArith List Bool Arith Lia.
From Coq Require Extraction ExtrOcamlBasic ExtrOcamlNatInt.
Import ListNotations.
From BF Require Import Model Transform Machine Narrow Validate.
Open Scope Z_scope.

(* One dimension of a region: the elements lo * unit .. lo * unit + ext - 1,
   lo and ext evaluated when the instance runs. unit is a tile's height or
   width for an hbm tile X[r, c], and 1 otherwise; ext is a constant, or a
   ragged view's max(0, min(C, E - lo)), which may be 0. A strided slice
   would add a step here, and `meets` would become the intersection of two
   arithmetic progressions. *)
Record dim := Dim { dlo : expr; dunit : Z; dext : expr }.

(* An access: a resource (a tile, or an hbm tensor numbered after the
   tiles), a write flag and a region, one dim per dimension: a tile's is
   [slot, slot + 1) x partitions x columns (a whole slot, or a view of
   it), an hbm tensor's rows x columns (an hbm tile, or an element
   slice). *)
Record access := Access { ares : nat; awrite : bool; adims : list dim }.

(* An access as it runs: its resource, write flag and, per dimension, the
   half-open interval [a, b) of elements it touches. *)
Definition rect := (nat * bool * list (Z * Z))%type.

Definition eval_dim (p : penv) (v : env) (d : dim) : Z * Z :=
  let a := eval p v (dlo d) * dunit d in (a, a + eval p v (dext d)).

Definition eval_rect (p : penv) (v : env) (a : access) : rect :=
  (ares a, awrite a, map (eval_dim p v) (adims a)).

(* Two intervals share an element: the later start is before the earlier
   end (an empty interval meets nothing). *)
Definition meets (x y : Z * Z) : bool := Z.max (fst x) (fst y) <? Z.min (snd x) (snd y).

Fixpoint meets_all (xs ys : list (Z * Z)) : bool :=
  match xs, ys with
  | [], [] => true
  | x :: xs', y :: ys' => meets x y && meets_all xs' ys'
  | _, _ => false
  end.

Definition rect_conflict (x y : rect) : bool :=
  let '(rx, wx, dx) := x in
  let '(ry, wy, dy) := y in
  Nat.eqb rx ry && (wx || wy) && meets_all dx dy.

(* The elements of a region: points with one coordinate per dimension. *)
Fixpoint inside (pt : list Z) (ds : list (Z * Z)) : Prop :=
  match pt, ds with
  | [], [] => True
  | z :: pt', d :: ds' => fst d <= z < snd d /\ inside pt' ds'
  | _, _ => False
  end.

Lemma meets_iff : forall x y, meets x y = true <-> exists z, fst x <= z < snd x /\ fst y <= z < snd y.
Proof.
  intros [a b] [c d]. unfold meets. simpl. rewrite Z.ltb_lt. split.
  - intros H. exists (Z.max a c). lia.
  - intros [z Hz]. lia.
Qed.

Lemma meets_all_iff : forall xs ys, meets_all xs ys = true <-> exists pt, inside pt xs /\ inside pt ys.
Proof.
  induction xs as [|x xs IH]; intros [|y ys]; simpl.
  - split; [intros _; exists []; simpl; auto | reflexivity].
  - split; [discriminate|]. intros [[|z pt] [H1 H2]]; simpl in *; tauto.
  - split; [discriminate|]. intros [[|z pt] [H1 H2]]; simpl in *; tauto.
  - rewrite andb_true_iff, meets_iff, IH. split.
    + intros [[z Hz] [pt Hpt]]. exists (z :: pt). simpl. tauto.
    + intros [[|z pt] [H1 H2]]; simpl in *; [tauto|]. split; [exists z|exists pt]; tauto.
Qed.

(* Conflicts are exactly intersecting element regions: two accesses
   conflict when they name the same resource, one of them writes, and
   some element lies in both regions. An empty dimension (a ragged extent
   of 0) holds no element and conflicts with nothing. *)
Theorem rect_conflict_iff : forall x y, rect_conflict x y = true <->
  fst (fst x) = fst (fst y) /\ (snd (fst x) || snd (fst y)) = true /\
  exists pt, inside pt (snd x) /\ inside pt (snd y).
Proof.
  intros [[rx wx] dx] [[ry wy] dy]. unfold rect_conflict. simpl.
  rewrite !andb_true_iff, Nat.eqb_eq, meets_all_iff. tauto.
Qed.

Definition rect_eq_dec : forall a b : rect, {a = b} + {a <> b}.
Proof. repeat decide equality; apply Z.eq_dec. Defined.

Definition rect_eqb (x y : rect) : bool := if rect_eq_dec x y then true else false.

Lemma rect_eqb_eq : forall a b, rect_eqb a b = true -> a = b.
Proof. intros a b. unfold rect_eqb. destruct (rect_eq_dec a b); [auto | discriminate]. Qed.

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

(* Machine.v: the machine with unbounded counters, and Soundness,
   Progress and Redundant-wait elimination for any placement of waits.

   The trace tr (the sequential program's dynamic instances) is split into
   one in-order stream per engine: engine c runs, in program order, the
   instances k of tr with ieng k = c (groups c). Before the op of instance
   k, c runs the waits W k, each `wait S_f >= T`, in order. Engine c's
   state is the number of its ops completed (done c, which is its counter
   S_c) and the number of waits of its current group passed (passed c). A
   step lets one engine run its next wait, when the comparison allows, or
   its next op, which completes at once and adds 1 to its counter. An op
   is modelled as atomic: on an in-order engine that starts an instruction
   only after the previous one completed, starting and completing are two
   events with nothing of that engine in between, and counters only grow,
   so splitting them changes no wait's outcome. Executions are arbitrary
   interleavings of steps (reachable).

   A wait compares whole counts. Narrow.v runs B-bit counters, read by
   extension and kept exact by back-pressure, and shows that its
   executions are executions of this machine.

   implied c g e T says that, whenever engine c runs the op of its group g,
   S_e >= T is certain: a wait of c in this or an earlier group asks for
   T or more (the guard, known[e], and a wait kept by the static drop are
   this case), c's own counter (e = c), or transitively, a wait of c on f
   for Tf means f completed its op of group Tf - 1, before which S_e >= T
   was implied on f. *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
From BF Require Import Model.
Open Scope Z_scope.

Lemma geb_false : forall a b, Z.geb a b = false -> a < b.
Proof. intros a b H. rewrite Z.geb_leb, Z.leb_gt in H. exact H. Qed.

Section Machine.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).

Notation cnt := (cnt key).
Notation conflict := (conflict key kc).

Definition eng_at (k : nat) : nat :=
  match nth_error tr k with Some x => ieng key x | None => 0%nat end.

Definition groups (c : nat) : list nat :=
  filter (fun k => Nat.eqb (eng_at k) c) (seq 0 (length tr)).

Record mstate := MState { done : nat -> nat; passed : nat -> nat }.

Definition bump (g : nat -> nat) (c : nat) (z : nat) : nat -> nat :=
  fun e => if Nat.eqb e c then z else g e.

Inductive step : mstate -> nat -> mstate -> Prop :=
| StepWait : forall st c k f T,
    nth_error (groups c) (done st c) = Some k ->
    nth_error (W k) (passed st c) = Some (f, T) ->
    Z.geb (Z.of_nat (done st f)) T = true ->
    step st c (MState (done st) (bump (passed st) c (S (passed st c))))
| StepOp : forall st c k,
    nth_error (groups c) (done st c) = Some k ->
    passed st c = length (W k) ->
    step st c (MState (bump (done st) c (S (done st c))) (bump (passed st) c 0)).

Definition init := MState (fun _ => 0%nat) (fun _ => 0%nat).

Inductive reachable : mstate -> Prop :=
| ReachInit : reachable init
| ReachStep : forall st c st', reachable st -> step st c st' -> reachable st'.

(* ---- The invariant: every wait passed still holds. *)

Definition holds_now (st : mstate) :=
  forall c g k, nth_error (groups c) g = Some k ->
    ((g < done st c)%nat -> forall f T, In (f, T) (W k) -> T <= Z.of_nat (done st f)) /\
    (g = done st c -> (passed st c <= length (W k))%nat /\
       forall i f T, (i < passed st c)%nat -> nth_error (W k) i = Some (f, T) ->
         T <= Z.of_nat (done st f)).

Lemma step_mono : forall st c st' e, step st c st' -> (done st e <= done st' e)%nat.
Proof.
  intros st c st' e H. destruct H; simpl; unfold bump; [lia|].
  destruct (Nat.eqb e c) eqn:E; [apply Nat.eqb_eq in E; subst|]; lia.
Qed.

Lemma reachable_holds : forall st, reachable st -> holds_now st.
Proof.
  induction 1 as [|st c st' R IH S].
  - intros c g k _. simpl. split; [lia|]. intros ->. split; [lia|]. intros; lia.
  - pose proof (fun e => step_mono _ _ _ e S) as Mono.
    inversion S as [st0 c0 k f T Hg HW Hge | st0 c0 k Hg Hp]; subst; intros c' g k' Hg'.
    + (* a wait *)
      simpl in *. destruct (IH c' g k' Hg') as [H1 H2]. split.
      * intros Hlt f' T' Hin. specialize (H1 Hlt f' T' Hin). lia.
      * intros Heq. unfold bump in *. destruct (Nat.eqb c' c) eqn:E.
        -- apply Nat.eqb_eq in E. subst c'. rewrite Heq in Hg'. rewrite Hg in Hg'.
           injection Hg' as <-. destruct (H2 Heq) as [Hl H3].
           assert (passed st c < length (W k))%nat by (apply nth_error_Some; congruence).
           split; [lia|]. intros i f' T' Hi Hn.
           destruct (Nat.eq_dec i (passed st c)).
           ++ subst i. rewrite HW in Hn. injection Hn as <- <-. apply Z.geb_le. exact Hge.
           ++ apply (H3 i); [lia | exact Hn].
        -- exact (H2 Heq).
    + (* an op *)
      simpl in *. destruct (IH c' g k' Hg') as [H1 H2]. unfold bump in *.
      destruct (Nat.eqb c' c) eqn:E.
      * apply Nat.eqb_eq in E. subst c'. split.
        -- intros Hlt f T Hin. destruct (Nat.eq_dec g (done st c)).
           ++ subst g. rewrite Hg in Hg'. injection Hg' as <-.
              destruct (H2 eq_refl) as [_ H3]. destruct (In_nth_error _ _ Hin) as [i Hi].
              assert (i < length (W k))%nat by (apply nth_error_Some; congruence).
              pose proof (H3 i f T ltac:(lia) Hi). specialize (Mono f). lia.
           ++ assert (g < done st c)%nat by lia. pose proof (H1 H f T Hin). specialize (Mono f). lia.
        -- intros Heq. split; [lia|]. intros; lia.
      * split.
        -- intros Hlt f T Hin. pose proof (H1 Hlt f T Hin). specialize (Mono f). lia.
        -- intros Heq. destruct (H2 Heq) as [Hl H3]. split; [exact Hl|].
           intros i f T Hi Hn. pose proof (H3 i f T Hi Hn). specialize (Mono f). lia.
Qed.

(* ---- What the waits guarantee. *)

Inductive implied : nat -> nat -> nat -> Z -> Prop :=
| ImpNothing : forall c g e T, T <= 0 -> implied c g e T
| ImpWait : forall c g g' k e T T', (g' <= g)%nat -> nth_error (groups c) g' = Some k ->
    In (e, T') (W k) -> T <= T' -> implied c g e T
| ImpOwn : forall c g T, T <= Z.of_nat g -> implied c g c T
| ImpThrough : forall c g g' k f Tf e T, (g' <= g)%nat -> nth_error (groups c) g' = Some k ->
    In (f, Tf) (W k) -> 1 <= Tf -> implied f (Z.to_nat (Tf - 1)) e T -> implied c g e T.

Lemma implied_weaken : forall c g e T, implied c g e T ->
  forall T', T' <= T -> implied c g e T'.
Proof.
  induction 1; intros T0 Hle.
  - apply ImpNothing. lia.
  - eapply ImpWait; try eassumption. lia.
  - apply ImpOwn. lia.
  - eapply ImpThrough; try eassumption. apply IHimplied. exact Hle.
Qed.

(* What is implied before group g is implied before every later group. *)
Lemma implied_later : forall c g e T, implied c g e T -> forall g', (g <= g')%nat -> implied c g' e T.
Proof.
  induction 1; intros g0 Hle.
  - apply ImpNothing. lia.
  - apply (ImpWait c g0 g' k e T T'); [lia | assumption..].
  - apply ImpOwn. lia.
  - apply (ImpThrough c g0 g' k f Tf e T); [lia | assumption..].
Qed.

(* c is running, or has run, the op of its group g. *)
Definition at_or_past (st : mstate) (c g : nat) :=
  (g < done st c)%nat \/
  (g = done st c /\ exists k, nth_error (groups c) g = Some k /\ passed st c = length (W k)).

Lemma wait_holds : forall st c g g' k f T, holds_now st -> at_or_past st c g -> (g' <= g)%nat ->
  nth_error (groups c) g' = Some k -> In (f, T) (W k) -> T <= Z.of_nat (done st f).
Proof.
  intros st c g g' k f T H [Hlt | [Heq [k' [Hk' Hp]]]] Hle Hg Hin.
  - apply (proj1 (H c g' k Hg)); [lia | exact Hin].
  - destruct (Nat.eq_dec g' g).
    + subst g'. rewrite Hk' in Hg. injection Hg as <-.
      destruct (proj2 (H c g k' Hk') Heq) as [_ H3]. destruct (In_nth_error _ _ Hin) as [i Hi].
      assert (i < length (W k'))%nat by (apply nth_error_Some; congruence).
      apply (H3 i); [lia | exact Hi].
    + apply (proj1 (H c g' k Hg)); [lia | exact Hin].
Qed.

Lemma implied_holds : forall c g e T, implied c g e T ->
  forall st, holds_now st -> at_or_past st c g -> T <= Z.of_nat (done st e).
Proof.
  induction 1; intros st Hh Hp.
  - pose proof (Nat2Z.is_nonneg (done st e)). lia.
  - pose proof (wait_holds st c g g' k e T' Hh Hp H H0 H1). lia.
  - destruct Hp as [Hlt | [Heq _]]; lia.
  - pose proof (wait_holds st c g g' k f Tf Hh Hp H H0 H1).
    apply IHimplied; [exact Hh|]. left. lia.
Qed.

(* ---- Soundness. *)

(* The instance at index j has completed: its op ran on its engine. *)
Definition completed (st : mstate) (j : nat) :=
  exists g, nth_error (groups (eng_at j)) g = Some j /\ (g < done st (eng_at j))%nat.

(* Every wait placement in which each need is implied. *)
Definition covers :=
  forall c g k xk j x, nth_error (groups c) g = Some k -> nth_error tr k = Some xk ->
    (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
    conflict (ikeys key x) (ikeys key xk) = true ->
    implied c g (ieng key x) (cnt (ieng key x) (firstn j tr) + 1).

Lemma firstn_snoc : forall {A} (l : list A) j x,
  nth_error l j = Some x -> firstn (S j) l = firstn j l ++ [x].
Proof.
  induction l; intros [|j] x H; simpl in *; try discriminate.
  - injection H as <-. reflexivity.
  - f_equal. apply IHl. exact H.
Qed.

Lemma groups_count : forall f j, (j <= length tr)%nat ->
  Z.of_nat (length (filter (fun k => Nat.eqb (eng_at k) f) (seq 0 j))) = cnt f (firstn j tr).
Proof.
  intros f. induction j; intros Hj; [reflexivity|].
  destruct (nth_error tr j) as [x|] eqn:E; [|apply nth_error_None in E; lia].
  rewrite seq_S, filter_app, app_length, (firstn_snoc _ _ _ E), cnt_app, Nat2Z.inj_add,
    IHj by lia.
  simpl. unfold eng_at. rewrite E. destruct (Nat.eqb (ieng key x) f); simpl; lia.
Qed.

Lemma seq_split : forall j n, (j < n)%nat -> seq 0 n = seq 0 j ++ [j] ++ seq (S j) (n - S j).
Proof.
  intros j n H. replace n with (j + S (n - S j))%nat at 1 by lia.
  rewrite seq_app. simpl. reflexivity.
Qed.

(* Instance j is the (P_f(before j))-th op of its engine f. *)
Lemma group_index : forall j x, nth_error tr j = Some x ->
  nth_error (groups (ieng key x)) (Z.to_nat (cnt (ieng key x) (firstn j tr))) = Some j.
Proof.
  intros j x Hj. assert (Hlt: (j < length tr)%nat) by (apply nth_error_Some; congruence).
  unfold groups. rewrite (seq_split j (length tr) Hlt), !filter_app.
  rewrite <- groups_count by lia. rewrite Nat2Z.id.
  rewrite nth_error_app2 by lia. rewrite Nat.sub_diag. simpl.
  unfold eng_at. rewrite Hj, Nat.eqb_refl. reflexivity.
Qed.

Lemma eng_at_nth : forall j x, nth_error tr j = Some x -> eng_at j = ieng key x.
Proof. intros j x H. unfold eng_at. rewrite H. reflexivity. Qed.

Lemma groups_in : forall c g k, nth_error (groups c) g = Some k ->
  (k < length tr)%nat /\ eng_at k = c.
Proof.
  intros c g k H. apply nth_error_In in H. unfold groups in H.
  apply filter_In in H. destruct H as [H1 H2]. apply in_seq in H1. apply Nat.eqb_eq in H2. lia.
Qed.

Theorem soundness_general : covers ->
  forall st c st', reachable st -> step st c st' ->
  forall k xk, nth_error (groups c) (done st c) = Some k -> passed st c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict (ikeys key x) (ikeys key xk) = true -> completed st j.
Proof.
  intros Hcov st c st' R _ k xk Hg Hp Hk j x Hj Hx Hne Hc.
  pose proof (Hcov c (done st c) k xk j x Hg Hk Hj Hx Hne Hc) as Himp.
  pose proof (implied_holds _ _ _ _ Himp st (reachable_holds st R)
                (or_intror (conj eq_refl (ex_intro _ k (conj Hg Hp))))) as Hd.
  exists (Z.to_nat (cnt (ieng key x) (firstn j tr))).
  rewrite (eng_at_nth j x Hx). split; [apply group_index; exact Hx|].
  pose proof (cnt_nonneg key (ieng key x) (firstn j tr)). lia.
Qed.

(* ---- Progress. *)

(* Every wait before instance k asks only for producers earlier in program
   order: no more than the f-instances before k. *)
Definition earlier_only :=
  forall k xk f T, nth_error tr k = Some xk -> In (f, T) (W k) -> T <= cnt f (firstn k tr).

Lemma group_before : forall f g k, (k <= length tr)%nat -> Z.of_nat g < cnt f (firstn k tr) ->
  exists k', nth_error (groups f) g = Some k' /\ (k' < k)%nat.
Proof.
  intros f g k Hk Hg. unfold groups.
  replace (length tr) with (k + (length tr - k))%nat by lia. rewrite seq_app, filter_app.
  rewrite <- groups_count in Hg by lia.
  assert (Hl: (g < length (filter (fun k0 => Nat.eqb (eng_at k0) f) (seq 0 k)))%nat) by lia.
  rewrite nth_error_app1 by exact Hl.
  destruct (nth_error (filter _ (seq 0 k)) g) as [k'|] eqn:E;
    [|apply nth_error_None in E; lia].
  exists k'. split; [reflexivity|]. apply nth_error_In in E. apply filter_In in E.
  destruct E as [E _]. apply in_seq in E. lia.
Qed.

Lemma done_bound : forall st c, holds_now st -> reachable st ->
  (done st c <= length (groups c))%nat.
Proof.
  intros st c _ R. induction R; simpl; [lia|].
  inversion H; subst; simpl; [exact IHR|]. unfold bump.
  destruct (Nat.eqb c c0) eqn:E; [|exact IHR]. apply Nat.eqb_eq in E. subst.
  assert (done st c0 < length (groups c0))%nat by (apply nth_error_Some; congruence). lia.
Qed.

Theorem progress_general : earlier_only ->
  forall st, reachable st -> forall c k, nth_error (groups c) (done st c) = Some k ->
  exists c' st', step st c' st'.
Proof.
  intros Hearly st R. pose proof (reachable_holds st R) as H.
  intros c k. revert c. induction k as [k IH] using lt_wf_ind. intros c Hg.
  destruct (proj2 (H c (done st c) k Hg) eq_refl) as [Hl _].
  destruct (Nat.eq_dec (passed st c) (length (W k))) as [Heq|Hne].
  - exists c. eexists. eapply StepOp; eassumption.
  - destruct (nth_error (W k) (passed st c)) as [[f T]|] eqn:HW;
      [|apply nth_error_None in HW; lia].
    destruct (Z.geb (Z.of_nat (done st f)) T) eqn:Hge.
    + exists c. eexists. eapply StepWait; eassumption.
    + apply geb_false in Hge.
      destruct (groups_in c (done st c) k Hg) as [Hk _].
      destruct (nth_error tr k) as [xk|] eqn:Exk; [|apply nth_error_None in Exk; lia].
      pose proof (Hearly k xk f T Exk (nth_error_In _ _ HW)) as Hle.
      destruct (group_before f (done st f) k ltac:(lia) ltac:(lia)) as [k' [Hk' Hlt]].
      exact (IH k' Hlt f Hk').
Qed.

End Machine.

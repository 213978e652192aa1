(* Validate.v: a checker, proved sound, for the waits a compiler actually
   emitted (translation validation of bfsync's streams).

   Given the trace tr of a kernel and the waits W k that bfsync's streams
   evaluate before each instance k (recovered by interpreting them), the
   checker computes, for every instance k on engine c, the vector
   hb k: for every engine f, a value that S_f is certain to have reached
   when k's op runs, from
   - c's own count (c ran gidx k ops before k),
   - what was certain before c's previous op (the guard: waits already
     passed stay passed),
   - each wait `S_e >= T` before k: S_e >= T itself, and everything that was
     certain before e's op of group T - 1, which has completed (transitive
     waits),
   a vector clock over the waits (the earlier vectors, each engine's
   groups and the instances are looked up in PositiveMaps, ix and hbm,
   proved equal to the lists they index). validate then checks that every
   instance's engine is one of the machine's ne engines, that hb k covers
   need_f(k) for every other engine f, and that no wait asks for an
   instance later in program order.

   Theorems validated_soundness and validated_progress: if validate says
   true, the machine running exactly those waits is sound and cannot
   deadlock. This is how the redundant-wait theorem reaches bfsync's real
   streams, whose waits the guard and the static drop thin out. *)
From Coq Require Import ZArith List Bool Arith Lia.
From Coq Require Import FSets.FMapPositive.
Import ListNotations.
From BF Require Import Model Machine.
Open Scope Z_scope.

(* ---- Lists indexed in logarithmic time: element i of l under the key
   key_of i of a PositiveMap. The checker looks up earlier
   vectors, groups and instances this way instead of walking lists. *)
Module PM := PositiveMap.

(* The key of index n: S n in binary. It halves n (Nat.div2, extracted as
   OCaml's division) rather than counting up to it, so that a lookup takes
   logarithmic time; fuel f >= n bounds the recursion for Coq. *)
Fixpoint pos_go (f n : nat) : positive :=
  match f with
  | O => xH
  | S f' => if Nat.leb n 1 then xH
            else let q := Nat.div2 n in
                 if Nat.eqb (n - 2 * q) 0 then xO (pos_go f' q) else xI (pos_go f' q)
  end.

Definition key_of (n : nat) : positive := pos_go (S n) (S n).

Lemma pos_go_nat : forall f n, (1 <= n <= f)%nat -> Pos.to_nat (pos_go f n) = n.
Proof.
  induction f as [|f IH]; intros n Hn; [lia|]. cbn [pos_go].
  destruct (Nat.leb_spec n 1) as [E|E]; [rewrite Pos2Nat.inj_1; lia|].
  pose proof (Nat.div2_odd n) as Hd. set (q := Nat.div2 n) in *.
  assert (Hq: (1 <= q <= f)%nat) by (destruct (Nat.odd n); simpl in Hd; lia).
  destruct (Nat.eqb_spec (n - 2 * q) 0) as [Z|Z].
  - rewrite Pos2Nat.inj_xO, (IH q Hq). lia.
  - rewrite Pos2Nat.inj_xI, (IH q Hq). destruct (Nat.odd n); simpl in Hd; lia.
Qed.

Lemma key_of_inj : forall i j, key_of i = key_of j -> i = j.
Proof.
  intros i j H. unfold key_of in H. apply (f_equal Pos.to_nat) in H.
  rewrite !pos_go_nat in H by lia. lia.
Qed.

Fixpoint ixb {A} (l : list A) (i : nat) (m : PM.t A) : PM.t A :=
  match l with
  | [] => m
  | x :: r => ixb r (S i) (PM.add (key_of i) x m)
  end.

Definition ix {A} (l : list A) : PM.t A := ixb l 0 (PM.empty A).

Lemma ixb_find : forall {A} (l : list A) i m,
  (forall j, (i <= j)%nat -> PM.find (key_of j) m = None) ->
  forall j, PM.find (key_of j) (ixb l i m) =
            if Nat.ltb j i then PM.find (key_of j) m else nth_error l (j - i).
Proof.
  induction l as [|x r IH]; intros i m Hm j; cbn [ixb].
  - destruct (Nat.ltb_spec j i) as [E|E]; [reflexivity|].
    rewrite (Hm j E). destruct (j - i)%nat; reflexivity.
  - rewrite IH.
    + destruct (Nat.ltb_spec j (S i)) as [E1|E1], (Nat.ltb_spec j i) as [E2|E2]; try lia.
      * rewrite PM.gso; [reflexivity|]. intros H. apply key_of_inj in H. lia.
      * assert (j = i) by lia. subst. rewrite PM.gss, Nat.sub_diag. reflexivity.
      * replace (j - i)%nat with (S (j - S i)) by lia. reflexivity.
    + intros j' Hj'. rewrite PM.gso by (intros H; apply key_of_inj in H; lia). apply Hm. lia.
Qed.

Lemma ix_nth : forall {A} (l : list A) j, PM.find (key_of j) (ix l) = nth_error l j.
Proof.
  intros A l j. unfold ix. rewrite ixb_find by (intros; apply PM.gempty).
  destruct (Nat.ltb j 0) eqn:E; [apply Nat.ltb_lt in E; lia|]. rewrite Nat.sub_0_r. reflexivity.
Qed.

Section Validate.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable ne : nat.

Notation groups := (groups key tr).
Notation eng_at := (eng_at key tr).

(* k is the gidx k-th op of its engine. *)
Definition gidx (k : nat) : nat :=
  length (filter (fun i => Nat.eqb (eng_at i) (eng_at k)) (seq 0 k)).

(* The same two functions, computed faster (a table of groups, one pass
   for gidx); the checker runs these. *)
Variable gat : nat -> nat -> option nat.
Hypothesis gat_ok : forall e i, gat e i = nth_error (groups e) i.
Variable gix : nat -> nat.
Hypothesis gix_ok : forall k, (k < length tr)%nat -> gix k = gidx k.
(* need_f(k) for every other engine f of the machine, computed faster (by
   the transform's walk, which Transform.exactness proves equal). *)
Variable nd : nat -> nat -> Z.
Hypothesis nd_ok : forall k xk f, nth_error tr k = Some xk -> f <> ieng key xk -> (f < ne)%nat ->
  nd k f = Model.need key kc (firstn k tr) f (ikeys key xk).

Notation implied := (implied key tr W).
Notation need := (need key kc).
Notation cnt := (cnt key).

Definition vget (v : list Z) (f : nat) : Z := nth f v 0.

Lemma vget_nil : forall f, vget [] f = 0.
Proof. intros [|f]; reflexivity. Qed.

(* The vector of e's op of group i, if that op comes before k (else []);
   look j is the vector of instance j. *)
Definition hb_vec (look : nat -> list Z) (k e i : nat) : list Z :=
  match gat e i with
  | Some j => if Nat.ltb j k then look j else []
  | None => []
  end.

(* Each source's vector is looked up once, then combined engine by engine. *)
Definition hb_step (look : nat -> list Z) (k : nat) : list Z :=
  let c := eng_at k in
  let g := gix k in
  let prev := match g with O => [] | S g' => hb_vec look k c g' end in
  let ws := map (fun w => (w, if 1 <=? snd w then hb_vec look k (fst w) (Z.to_nat (snd w - 1)) else [])) (W k) in
  map (fun f =>
         fold_right Z.max 0
           ((if Nat.eqb f c then Z.of_nat g else 0) :: vget prev f ::
            flat_map (fun wv => let '((e, T), v) := wv in [if Nat.eqb f e then T else 0; vget v f]) ws))
      (seq 0 ne).

Fixpoint hbs (n : nat) : list (list Z) :=
  match n with
  | O => []
  | S m => let d := hbs m in d ++ [hb_step (fun j => nth j d []) m]
  end.

Definition hb (k : nat) : list Z := hb_step (fun j => nth j (hbs k) []) k.

Lemma hbs_length : forall n, length (hbs n) = n.
Proof. induction n; simpl; [reflexivity|]. rewrite app_length, IHn. simpl. lia. Qed.

Lemma hbs_nth : forall n j, (j < n)%nat -> nth j (hbs n) [] = hb j.
Proof.
  induction n; intros j H; [lia|]. simpl.
  destruct (Nat.eq_dec j n).
  - subst. rewrite app_nth2 by (rewrite hbs_length; lia). rewrite hbs_length, Nat.sub_diag.
    reflexivity.
  - rewrite app_nth1 by (rewrite hbs_length; lia). apply IHn. lia.
Qed.

(* hb_step reads only the vectors of earlier instances. *)
Lemma hb_step_ext : forall l1 l2 k, (forall j, (j < k)%nat -> l1 j = l2 j) -> hb_step l1 k = hb_step l2 k.
Proof.
  intros l1 l2 k H.
  assert (Hv: forall e i, hb_vec l1 k e i = hb_vec l2 k e i).
  { intros e i. unfold hb_vec. destruct (gat e i) as [j|]; [|reflexivity].
    destruct (Nat.ltb j k) eqn:E; [apply Nat.ltb_lt in E; apply H; exact E | reflexivity]. }
  assert (Ep: match gix k with O => [] | S g' => hb_vec l1 k (eng_at k) g' end =
              match gix k with O => [] | S g' => hb_vec l2 k (eng_at k) g' end)
    by (destruct (gix k); [reflexivity | apply Hv]).
  assert (Ew: map (fun w => (w, if 1 <=? snd w then hb_vec l1 k (fst w) (Z.to_nat (snd w - 1)) else [])) (W k) =
              map (fun w => (w, if 1 <=? snd w then hb_vec l2 k (fst w) (Z.to_nat (snd w - 1)) else [])) (W k))
    by (apply map_ext; intros w; rewrite Hv; reflexivity).
  unfold hb_step. cbv zeta. rewrite Ep, Ew. reflexivity.
Qed.

(* The same vectors in a map, built in one pass: what the checker runs. *)
Definition lookm (m : PM.t (list Z)) (j : nat) : list Z :=
  match PM.find (key_of j) m with Some v => v | None => [] end.

Fixpoint hbm (n : nat) : PM.t (list Z) :=
  match n with
  | O => PM.empty _
  | S m => let d := hbm m in PM.add (key_of m) (hb_step (lookm d) m) d
  end.

Lemma hbm_nth : forall n j, (j < n)%nat -> lookm (hbm n) j = hb j.
Proof.
  induction n; intros j H; [lia|]. unfold lookm. simpl.
  destruct (Nat.eq_dec j n).
  - subst. rewrite PM.gss. unfold hb. apply hb_step_ext. intros j Hj.
    rewrite (IHn j Hj), hbs_nth by exact Hj. reflexivity.
  - rewrite PM.gso by (intros E; apply key_of_inj in E; lia). apply IHn. lia.
Qed.

Definition validate : bool :=
  let hs := hbm (length tr) in
  let trm := ix tr in
  forallb (fun x => Nat.ltb (ieng key x) ne) tr &&
  forallb (fun k =>
    match PM.find (key_of k) trm with
    | Some xk =>
        let ndk := nd k in
        let hk := lookm hs k in
        forallb (fun f => Nat.eqb f (ieng key xk) || (ndk f <=? vget hk f)) (seq 0 ne) &&
        forallb (fun w => let '(f, T) := w in
                   negb (Nat.eqb f (ieng key xk)) && Nat.ltb f ne && (T <=? ndk f)) (W k)
    | None => true
    end) (seq 0 (length tr)).

(* ---- Indices in a filtered range. *)

Lemma nth_filter_seq : forall (P : nat -> bool) m s i j,
  nth_error (filter P (seq s m)) i = Some j -> length (filter P (seq s (j - s))) = i.
Proof.
  induction m; intros s i j H; simpl in H; [destruct i; discriminate|].
  assert (Hge: forall i' j', nth_error (filter P (seq (S s) m)) i' = Some j' -> (S s <= j')%nat).
  { intros i' j' Hn. apply nth_error_In, filter_In in Hn. destruct Hn as [Hn _].
    apply in_seq in Hn. lia. }
  destruct (P s) eqn:Ps.
  - destruct i as [|i]; simpl in H.
    + injection H as <-. rewrite Nat.sub_diag. reflexivity.
    + pose proof (Hge _ _ H). specialize (IHm (S s) i j H).
      replace (j - s)%nat with (S (j - S s)) by lia. simpl. rewrite Ps. simpl. lia.
  - pose proof (Hge _ _ H). specialize (IHm (S s) i j H).
    replace (j - s)%nat with (S (j - S s)) by lia. simpl. rewrite Ps. exact IHm.
Qed.

Lemma gidx_of_group : forall e i j, nth_error (groups e) i = Some j -> gidx j = i /\ eng_at j = e.
Proof.
  intros e i j H. destruct (groups_in key tr e i j H) as [_ He].
  split; [|exact He]. unfold gidx. rewrite He.
  pose proof (nth_filter_seq _ _ 0 i j H). rewrite Nat.sub_0_r in H0. exact H0.
Qed.

Lemma group_of_gidx : forall k, (k < length tr)%nat -> nth_error (groups (eng_at k)) (gidx k) = Some k.
Proof.
  intros k Hk. destruct (nth_error tr k) as [x|] eqn:E; [|apply nth_error_None in E; lia].
  pose proof (group_index key tr k x E) as G. rewrite <- (groups_count key tr) in G by lia.
  rewrite Nat2Z.id in G. unfold gidx. rewrite (eng_at_nth key tr k x E). exact G.
Qed.

Lemma nth_map_seq : forall (F : nat -> Z) f n, (f < n)%nat -> nth f (map F (seq 0 n)) 0 = F f.
Proof.
  intros F f n H. rewrite nth_indep with (d' := F 0%nat) by (rewrite map_length, seq_length; exact H).
  rewrite map_nth, seq_nth by exact H. reflexivity.
Qed.

(* ---- hb is implied. *)

Lemma implied_max : forall c g f l, (forall x, In x l -> implied c g f x) ->
  implied c g f (fold_right Z.max 0 l).
Proof.
  induction l; simpl; intros H. - apply ImpNothing. lia.
  - destruct (Z.max_spec a (fold_right Z.max 0 l)) as [[_ ->] | [_ ->]]; auto.
Qed.

Lemma hb_implied : forall k, (k < length tr)%nat ->
  forall f, implied (eng_at k) (gidx k) f (vget (hb k) f).
Proof.
  induction k as [k IH] using lt_wf_ind. intros Hk f.
  pose proof (group_of_gidx k Hk) as Gk.
  (* what an earlier op j of engine e at group i guarantees at k *)
  assert (Hvec: forall e i, (forall j, nth_error (groups e) i = Some j -> (j < k)%nat ->
                   implied (eng_at j) (gidx j) f (vget (hb j) f) -> implied (eng_at k) (gidx k) f (vget (hb j) f)) ->
            implied (eng_at k) (gidx k) f (vget (hb_vec (fun j => nth j (hbs k) []) k e i) f)).
  { intros e i Hj. unfold hb_vec. rewrite gat_ok.
    destruct (nth_error (groups e) i) as [j|] eqn:Ej; [|rewrite vget_nil; apply ImpNothing; lia].
    destruct (Nat.ltb j k) eqn:Ejk; [|rewrite vget_nil; apply ImpNothing; lia]. apply Nat.ltb_lt in Ejk.
    rewrite hbs_nth by exact Ejk. apply Hj; [reflexivity | exact Ejk | apply IH; lia]. }
  unfold hb, hb_step. rewrite (gix_ok k Hk).
  destruct (Nat.lt_ge_cases f ne) as [Hf|Hf];
    [|unfold vget at 1; rewrite nth_overflow by (rewrite map_length, seq_length; lia); apply ImpNothing; lia].
  unfold vget at 1. rewrite nth_map_seq by exact Hf. cbv beta.
  apply implied_max. intros x Hin. destruct Hin as [<- | [<- | Hin]].
  - destruct (Nat.eqb f (eng_at k)) eqn:E; [|apply ImpNothing; lia].
    apply Nat.eqb_eq in E. subst f. apply ImpOwn. lia.
  - destruct (gidx k) as [|g'] eqn:G; [rewrite vget_nil; apply ImpNothing; lia|].
    apply Hvec. intros j Ej Ejk Hj. destruct (gidx_of_group _ _ _ Ej) as [G1 G2].
    rewrite G1, G2 in Hj. apply (implied_later key tr W _ _ _ _ Hj). lia.
  - apply in_flat_map in Hin. destruct Hin as [[[e T] v] [Hw Hin]].
    apply in_map_iff in Hw. destruct Hw as [[e' T'] [Heq Hw]]. simpl in Heq.
    injection Heq as <- <- <-.
    destruct Hin as [<- | [<- | []]].
    + destruct (Nat.eqb f e') eqn:E; [|apply ImpNothing; lia]. apply Nat.eqb_eq in E. subst f.
      apply (ImpWait key tr W (eng_at k) (gidx k) (gidx k) k e' T' T'); auto; lia.
    + destruct (1 <=? T') eqn:E1; [|rewrite vget_nil; apply ImpNothing; lia]. apply Z.leb_le in E1.
      apply Hvec. intros j Ej Ejk Hj. destruct (gidx_of_group _ _ _ Ej) as [G1 G2].
      rewrite G1, G2 in Hj.
      apply (ImpThrough key tr W (eng_at k) (gidx k) (gidx k) k e' T' f); auto.
Qed.

(* ---- What validate establishes. *)

Lemma validate_spec : validate = true ->
  (forall x, In x tr -> (ieng key x < ne)%nat) /\
  (forall k xk f, nth_error tr k = Some xk -> f <> ieng key xk -> (f < ne)%nat ->
     need (firstn k tr) f (ikeys key xk) <= vget (hb k) f) /\
  (forall k xk f T, nth_error tr k = Some xk -> In (f, T) (W k) -> T <= need (firstn k tr) f (ikeys key xk)).
Proof.
  unfold validate. intros H. apply andb_true_iff in H. destruct H as [H1 H2].
  rewrite forallb_forall in H1, H2. split; [|split].
  - intros x Hx. apply Nat.ltb_lt. auto.
  - intros k xk f Hk Hf Hfl.
    assert (Hlt: (k < length tr)%nat) by (apply nth_error_Some; congruence).
    specialize (H2 k (proj2 (in_seq _ 0 k) (conj (Nat.le_0_l k) Hlt))). rewrite ix_nth, Hk in H2. cbv zeta in H2.
    apply andb_true_iff in H2. destruct H2 as [H2 _]. rewrite forallb_forall in H2.
    specialize (H2 f (proj2 (in_seq _ 0 f) (conj (Nat.le_0_l f) Hfl))).
    apply orb_true_iff in H2. destruct H2 as [E|E]; [apply Nat.eqb_eq in E; contradiction|].
    apply Z.leb_le in E. rewrite hbm_nth in E by lia.
    rewrite <- (nd_ok k xk f Hk Hf Hfl). exact E.
  - intros k xk f T Hk Hin.
    assert (Hlt: (k < length tr)%nat) by (apply nth_error_Some; congruence).
    specialize (H2 k (proj2 (in_seq _ 0 k) (conj (Nat.le_0_l k) Hlt))). rewrite ix_nth, Hk in H2. cbv zeta in H2.
    apply andb_true_iff in H2. destruct H2 as [_ H2]. rewrite forallb_forall in H2.
    specialize (H2 (f, T) Hin). repeat rewrite andb_true_iff in H2. destruct H2 as [[Hn Hl] HT].
    apply negb_true_iff, Nat.eqb_neq in Hn. apply Nat.ltb_lt in Hl.
    rewrite <- (nd_ok k xk f Hk Hn Hl). apply Z.leb_le. exact HT.
Qed.

Lemma validate_earlier : validate = true -> earlier_only key tr W.
Proof.
  intros V k xk f T Hk Hin. destruct (validate_spec V) as [_ [_ H]].
  pose proof (H k xk f T Hk Hin). pose proof (need_bounds key kc (firstn k tr) f (ikeys key xk)). lia.
Qed.

(* Never late: a wait asks for no more than its instance needs. Once every
   earlier f-instance that conflicts with k has completed, each wait of k
   on f holds, whatever else has run. *)
Lemma validated_not_late : validate = true ->
  forall st k xk f T, nth_error tr k = Some xk -> In (f, T) (W k) ->
  (forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x = f ->
     conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j) ->
  T <= Z.of_nat (done st f).
Proof.
  intros V st k xk f T Hk Hin Hdone. destruct (validate_spec V) as [_ [_ H]].
  pose proof (H k xk f T Hk Hin) as HT.
  destruct (Z.le_gt_cases (need (firstn k tr) f (ikeys key xk)) 0) as [Z0|Pos]; [lia|].
  destruct (need_witness key kc (firstn k tr) f (ikeys key xk) Pos) as [j [x [Hj [Hf [Hc Hn]]]]].
  assert (Hjk: (j < k)%nat).
  { assert (Hs: nth_error (firstn k tr) j <> None) by congruence.
    apply nth_error_Some in Hs. rewrite firstn_length in Hs. lia. }
  rewrite nth_error_firstn_lt in Hj by exact Hjk.
  rewrite firstn_firstn, Nat.min_l in Hn by lia.
  destruct (Hdone j x Hjk Hj Hf Hc) as [g [Hg Hlt]].
  rewrite (eng_at_nth key tr j x Hj), Hf in Hg, Hlt.
  pose proof (group_index key tr j x Hj) as Gi. rewrite Hf in Gi.
  destruct (gidx_of_group f g j Hg) as [G1 _]. destruct (gidx_of_group f _ j Gi) as [G2 _].
  pose proof (cnt_nonneg key f (firstn j tr)). lia.
Qed.

(* If validate accepts the waits, every interleaving is sound... *)
Lemma validated_covers : validate = true -> covers key kc tr W.
Proof.
  intros V. destruct (validate_spec V) as [Hne [Hcov _]].
  intros c g k xk j x Hg Hk Hj Hx Hxc Hc.
  destruct (gidx_of_group c g k Hg) as [G1 G2].
  assert (Hlt: (k < length tr)%nat) by (apply nth_error_Some; congruence).
  pose proof (hb_implied k Hlt (ieng key x)) as I. rewrite G1, G2 in I.
  apply (implied_weaken key tr W _ _ _ _ I).
  eapply Z.le_trans; [|apply (Hcov k xk (ieng key x) Hk)].
  - pose proof (need_ge key kc (ieng key x) (ikeys key xk) (firstn k tr) j x) as G.
    rewrite firstn_firstn, Nat.min_l in G by lia. apply G; [|reflexivity|exact Hc].
    rewrite nth_error_firstn_lt by exact Hj. exact Hx.
  - rewrite <- (eng_at_nth key tr k xk Hk), G2. exact Hxc.
  - apply Hne. apply nth_error_In with j. exact Hx.
Qed.

Theorem validated_soundness : validate = true ->
  forall st c st', reachable key tr W st -> step key tr W st c st' ->
  forall k xk, nth_error (groups c) (done st c) = Some k -> passed st c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j.
Proof. intros V. apply soundness_general. exact (validated_covers V). Qed.

(* ... and no interleaving deadlocks. *)
Theorem validated_progress : validate = true ->
  forall st, reachable key tr W st -> forall c k, nth_error (groups c) (done st c) = Some k ->
  exists c' st', step key tr W st c' st'.
Proof.
  intros V. apply progress_general. exact (validate_earlier V).
Qed.

End Validate.

(* ---- The checker as run: the faster groups and gidx. *)

Section Check.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable ne : nat.
Variable nd : nat -> nat -> Z.
Hypothesis nd_ok : forall k xk f, nth_error tr k = Some xk -> f <> ieng key xk -> (f < ne)%nat ->
  nd k f = need key kc (firstn k tr) f (ikeys key xk).

Definition gidx_fast (k : nat) : nat :=
  let c := eng_at key tr k in length (filter (fun e => Nat.eqb e c) (firstn k (map (ieng key) tr))).

(* groups in one pass over the trace. *)
Definition groups_fast (c : nat) : list nat :=
  map fst (filter (fun p => Nat.eqb (ieng key (snd p)) c) (combine (seq 0 (length tr)) tr)).

Lemma groups_from : forall c l s, (forall i, nth_error l i = nth_error tr (s + i)) ->
  map fst (filter (fun p => Nat.eqb (ieng key (snd p)) c) (combine (seq s (length l)) l)) =
  filter (fun k => Nat.eqb (eng_at key tr k) c) (seq s (length l)).
Proof.
  intros c. induction l as [|x r IH]; intros s H; [reflexivity|].
  assert (E: eng_at key tr s = ieng key x).
  { unfold eng_at. specialize (H 0%nat). rewrite Nat.add_0_r in H. simpl in H. rewrite <- H. reflexivity. }
  assert (H': forall i, nth_error r i = nth_error tr (S s + i)).
  { intros i. transitivity (nth_error (x :: r) (S i)); [reflexivity|]. rewrite H. f_equal. lia. }
  change (seq s (length (x :: r))) with (s :: seq (S s) (length r)).
  change (combine (s :: seq (S s) (length r)) (x :: r)) with ((s, x) :: combine (seq (S s) (length r)) r).
  cbn [filter map fst snd]. rewrite E.
  destruct (Nat.eqb (ieng key x) c); cbn [map fst]; rewrite (IH (S s) H'); reflexivity.
Qed.

Lemma groups_fast_ok : forall c, groups_fast c = groups key tr c.
Proof. intros c. unfold groups_fast, groups. apply groups_from. reflexivity. Qed.

(* The groups of each engine, indexed (ix), so that the i-th is found in
   logarithmic time. *)
Definition check : bool :=
  let table := map (fun e => ix (groups_fast e)) (seq 0 ne) in
  validate key tr W ne
    (fun e i => if Nat.ltb e ne then PM.find (key_of i) (nth e table (PM.empty _))
                else nth_error (groups key tr e) i)
    gidx_fast nd.

Lemma firstn_map_ieng : forall k, (k <= length tr)%nat ->
  firstn k (map (ieng key) tr) = map (eng_at key tr) (seq 0 k).
Proof.
  induction k; intros Hk; [reflexivity|].
  destruct (nth_error tr k) as [x|] eqn:E; [|apply nth_error_None in E; lia].
  rewrite (firstn_snoc (map (ieng key) tr) k (ieng key x)) by (rewrite nth_error_map, E; reflexivity).
  rewrite IHk by lia. rewrite seq_S, map_app. simpl. rewrite (eng_at_nth key tr k x E). reflexivity.
Qed.

Lemma length_filter_map : forall {A} (P : nat -> bool) (g : A -> nat) l,
  length (filter P (map g l)) = length (filter (fun x => P (g x)) l).
Proof. induction l; simpl; [reflexivity|]. destruct (P (g a)); simpl; auto. Qed.

Lemma gidx_fast_ok : forall k, (k < length tr)%nat -> gidx_fast k = gidx key tr k.
Proof.
  intros k Hk. unfold gidx_fast, gidx. rewrite firstn_map_ieng by lia.
  rewrite length_filter_map. reflexivity.
Qed.

Lemma nth_map_seq_any : forall {A} (F : nat -> A) d e n, (e < n)%nat -> nth e (map F (seq 0 n)) d = F e.
Proof.
  intros A F d e n H. rewrite nth_indep with (d' := F 0%nat) by (rewrite map_length, seq_length; lia).
  rewrite map_nth, seq_nth by lia. reflexivity.
Qed.

Lemma table_ok : forall e i,
  (if Nat.ltb e ne then PM.find (key_of i) (nth e (map (fun e => ix (groups_fast e)) (seq 0 ne)) (PM.empty _))
   else nth_error (groups key tr e) i) = nth_error (groups key tr e) i.
Proof.
  intros e i. destruct (Nat.ltb e ne) eqn:E; [|reflexivity]. apply Nat.ltb_lt in E.
  rewrite (nth_map_seq_any (fun e0 => ix (groups_fast e0))) by exact E.
  rewrite ix_nth, groups_fast_ok. reflexivity.
Qed.

Theorem check_soundness : check = true ->
  forall st c st', reachable key tr W st -> step key tr W st c st' ->
  forall k xk, nth_error (groups key tr c) (done st c) = Some k -> passed st c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j.
Proof. intros V. eapply validated_soundness; [exact table_ok | exact gidx_fast_ok | exact nd_ok | exact V]. Qed.

(* What soundness needs of accepted waits (Pipeline.v too). *)
Lemma check_covers : check = true -> covers key kc tr W.
Proof. intros V. eapply validated_covers; [exact table_ok | exact gidx_fast_ok | exact nd_ok | exact V]. Qed.

(* What progress needs of accepted waits (Narrow.narrow_progress too). *)
Lemma check_earlier : check = true -> earlier_only key tr W.
Proof. intros V. eapply validate_earlier; [exact nd_ok | exact V]. Qed.

(* Exactness of accepted waits, on the unbounded machine: never early (in
   every interleaving, an instance starts only after every earlier
   conflicting instance on another engine completed) and never late (each
   wait holds as soon as the instances its instance conflicts with on that
   engine have completed). *)
Theorem check_exact : check = true ->
  (forall st c st', reachable key tr W st -> step key tr W st c st' ->
   forall k xk, nth_error (groups key tr c) (done st c) = Some k -> passed st c = length (W k) ->
   nth_error tr k = Some xk ->
   forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
   conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j) /\
  (forall st k xk f T, nth_error tr k = Some xk -> In (f, T) (W k) ->
   (forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x = f ->
      conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j) ->
   T <= Z.of_nat (done st f)).
Proof.
  intros V. split.
  - eapply validated_soundness; [exact table_ok | exact gidx_fast_ok | exact nd_ok | exact V].
  - intros st. eapply validated_not_late; [exact nd_ok | exact V].
Qed.

Theorem check_progress : check = true ->
  forall st, reachable key tr W st -> forall c k, nth_error (groups key tr c) (done st c) = Some k ->
  exists c' st', step key tr W st c' st'.
Proof. intros V. apply progress_general. exact (check_earlier V). Qed.

End Check.

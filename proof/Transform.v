(* Transform.v: the barrier-free thresholds as bfsync computes them, and
   Exactness.

   The transform walks the kernel in program order (transform/barrier_free.c)
   keeping, for every engine e, an expression equal to P_e at the current
   point, and tracked state for dependences:
   - an e-instruction adds 1 to P_e;
   - a loop whose per-iteration count K_e (count_b below) is closed-form and
     does not use the loop variable gives P_e = entry + (i - lo) * K_e at the
     start of iteration i, and entry + max(0, hi - lo) * K_e after the loop,
     whatever the walk threaded through the body: these are bfsync's closed
     forms, and the walk uses them, not the running count;
   - any other loop (a triangular nest, a conditional whose branches count
     differently) keeps the running count threaded through its iterations:
     bfsync's tracked cumulative count;
   - tracked state: after each e-access with key k, the entry (e, k, P_e
     after it), bfsync's tracking arrays (arr[slot] = P_e(after access)).
     The threshold of consumer b on producer f is the max over the entries
     of f whose key conflicts with one of b's accesses.
   The walk's output is, for every dynamic instance in program order, its
   instruction id and its threshold on every other engine.

   Theorem exactness: the output equals spec, which pairs each instance of
   the trace with need_f(b) computed from the trace prefix before it: every
   threshold is exactly need_f of its consumer. *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
From BF Require Import Model.
Open Scope Z_scope.

Section Transform.
Variable acc key : Type.
Variable eval_acc : penv -> env -> acc -> key.
Variable kc : key -> key -> bool.
Variable engs : list nat. (* the machine's engines *)
(* Key equality, used only to overwrite an entry (arr[slot] = ...): it must
   never say equal for different keys; missing an equality costs space only. *)
Variable key_eqb : key -> key -> bool.
Hypothesis key_eqb_eq : forall a b, key_eqb a b = true -> a = b.

Notation stmt := (stmt acc).
Notation block := (block acc).
Notation inst := (inst key).
Notation trace_s := (trace_s acc key eval_acc).
Notation trace_b := (trace_b acc key eval_acc).
Notation cnt := (cnt key).
Notation need := (need key kc).
Notation conflict := (conflict key kc).

(* ---- Closed-form counts (count_list in barrier_free.c).

   A count is exact arithmetic over trip counts: the kernel's bounds are
   64-bit values (eval wraps), and the number of iterations of a loop is
   max(0, hi - lo) of those values, counted without wrapping, as an
   instance count is. *)

Inductive cexpr :=
| CConst (z : Z)
| CTrips (hi lo : expr)
| CAdd (a b : cexpr)
| CMul (a b : cexpr).

Definition cexpr_eq_dec : forall a b : cexpr, {a = b} + {a <> b}.
Proof. decide equality; first [apply Z.eq_dec | apply expr_eq_dec]. Defined.

Fixpoint evalk (p : penv) (v : env) (x : cexpr) : Z :=
  match x with
  | CConst z => z
  | CTrips hi lo => Z.max 0 (eval p v hi - eval p v lo)
  | CAdd a b => evalk p v a + evalk p v b
  | CMul a b => evalk p v a * evalk p v b
  end.

Fixpoint usesk (l : nat) (x : cexpr) : bool :=
  match x with
  | CConst _ => false
  | CTrips hi lo => uses l hi || uses l lo
  | CAdd a b | CMul a b => usesk l a || usesk l b
  end.

Lemma evalk_set_unused : forall p v l z x, usesk l x = false -> evalk p (set v l z) x = evalk p v x.
Proof.
  induction x; simpl; intros H; try rewrite orb_false_iff in H; try reflexivity.
  - rewrite !eval_set_unused by apply H. reflexivity.
  - rewrite IHx1, IHx2 by apply H. reflexivity.
  - rewrite IHx1, IHx2 by apply H. reflexivity.
Qed.

Fixpoint count_s (s : stmt) (e : nat) : option cexpr :=
  match s with
  | SInstr _ _ e' _ => Some (CConst (if Nat.eqb e' e then 1 else 0))
  | SFor _ l lo hi body =>
      match count_b body e with
      | Some k => if usesk l k then None else Some (CMul (CTrips hi lo) k)
      | None => None
      end
  | SIf _ _ t f =>
      match count_b t e, count_b f e with
      | Some a, Some b => if cexpr_eq_dec a b then Some a else None
      | _, _ => None
      end
  end
with count_b (b : block) (e : nat) : option cexpr :=
  match b with
  | BNil _ => Some (CConst 0)
  | BCons _ s r =>
      match count_s s e, count_b r e with
      | Some a, Some b => Some (CAdd a b)
      | _, _ => None
      end
  end.

(* K_e of loop l's body when closed-form and independent of l's variable. *)
Definition body_count (body : block) (l e : nat) : option cexpr :=
  match count_b body e with
  | Some k => if usesk l k then None else Some k
  | None => None
  end.

Lemma iter_app_cnt : forall e (f : Z -> list inst) k n i,
  (forall j, cnt e (f j) = k) -> cnt e (iter f n i) = Z.of_nat n * k.
Proof.
  intros e f k n. induction n; intros i H; [reflexivity|]. simpl iter.
  rewrite cnt_app, H, (IHn (i + 1) H), Nat2Z.inj_succ. ring.
Qed.

Lemma count_correct :
  (forall s p v e k, count_s s e = Some k -> cnt e (trace_s p v s) = evalk p v k) /\
  (forall b p v e k, count_b b e = Some k -> cnt e (trace_b p v b) = evalk p v k).
Proof.
  apply stmt_block_ind; simpl; intros.
  - injection H as <-. simpl. destruct (Nat.eqb eng e); reflexivity.
  - destruct (count_b body e) as [k'|] eqn:E; [|discriminate].
    destruct (usesk l k') eqn:U; [discriminate|]. injection H0 as <-. simpl.
    change (trace_s p v (SFor acc l lo hi body)) with (iter (fun i => trace_b p (set v l i) body) (Z.to_nat (eval p v hi - eval p v lo)) (eval p v lo)).
    rewrite iter_app_cnt with (k := evalk p v k').
    + rewrite of_to_nat. reflexivity.
    + intros j. rewrite (H p (set v l j) e k' E). apply evalk_set_unused. exact U.
  - destruct (count_b t e) as [a'|] eqn:Ea; [|discriminate].
    destruct (count_b f e) as [b'|] eqn:Eb; [|discriminate].
    destruct (cexpr_eq_dec a' b'); [|discriminate]. injection H1 as <-. subst b'.
    change (trace_s p v (SIf acc c t f)) with
      (if evalc p v c then trace_b p v t else trace_b p v f).
    destruct (evalc p v c); [apply H | apply H0]; assumption.
  - injection H as <-. reflexivity.
  - destruct (count_s s e) as [a'|] eqn:Ea; [|discriminate].
    destruct (count_b rest e) as [b'|] eqn:Eb; [|discriminate].
    injection H1 as <-. simpl.
    change (trace_b p v (BCons acc s rest)) with (trace_s p v s ++ trace_b p v rest).
    rewrite cnt_app, (H p v e a' Ea), (H0 p v e b' Eb).
    reflexivity.
Qed.

(* ---- Tracked state and the walk. *)

Record state := State { spos : nat -> Z; stracked : list (nat * key * Z) }.

Definition lookup (tracked : list (nat * key * Z)) (f : nat) (ys : list key) : Z :=
  fold_right (fun '(e, k, v) a => if Nat.eqb e f && existsb (kc k) ys then Z.max v a else a)
             0 tracked.

(* The entries a new e-access with keys ks overwrites. *)
Definition stale (e : nat) (ks : list key) (entry : nat * key * Z) : bool :=
  let '(e', k', _) := entry in Nat.eqb e' e && existsb (key_eqb k') ks.

Definition record (e : nat) (ks : list key) (v : Z) (tracked : list (nat * key * Z)) :=
  map (fun k => (e, k, v)) ks ++ filter (fun x => negb (stale e ks x)) tracked.

Definition others (e : nat) := filter (fun f => negb (Nat.eqb f e)) engs.

Definition upd (pos : nat -> Z) (e : nat) (z : Z) : nat -> Z :=
  fun f => if Nat.eqb f e then z else pos f.

(* One output per dynamic instance: its instruction and its thresholds. *)
Definition out := (nat * list (nat * Z))%type.

Fixpoint iter_st (F : Z -> state -> list out * state) (n : nat) (i : Z) (w : state)
  : list out * state :=
  match n with
  | O => ([], w)
  | S n' => let (o1, w1) := F i w in
            let (o2, w2) := iter_st F n' (i + 1) w1 in (o1 ++ o2, w2)
  end.

Fixpoint walk_s (p : penv) (v : env) (s : stmt) (w : state) : list out * state :=
  match s with
  | SInstr _ id e accs =>
      let ks := map (eval_acc p v) accs in
      let after := spos w e + 1 in
      ([(id, map (fun f => (f, lookup (stracked w) f ks)) (others e))],
       State (upd (spos w) e after) (record e ks after (stracked w)))
  | SFor _ l lo hi body =>
      let lo' := eval p v lo in
      let n := Z.to_nat (eval p v hi - lo') in
      let entry := spos w in
      let at_iteration i w' :=
        State (fun e => match body_count body l e with
                        | Some k => entry e + (i - lo') * evalk p v k
                        | None => spos w' e
                        end) (stracked w') in
      let (o, w2) := iter_st (fun i w' => walk_b p (set v l i) body (at_iteration i w')) n lo' w in
      (o, State (fun e => match body_count body l e with
                          | Some k => entry e + Z.max 0 (eval p v hi - lo') * evalk p v k
                          | None => spos w2 e
                          end) (stracked w2))
  | SIf _ c t f =>
      if evalc p v c then walk_b p v t w else walk_b p v f w
  end
with walk_b (p : penv) (v : env) (b : block) (w : state) : list out * state :=
  match b with
  | BNil _ => ([], w)
  | BCons _ s r => let (o1, w1) := walk_s p v s w in
                   let (o2, w2) := walk_b p v r w1 in (o1 ++ o2, w2)
  end.

Definition init := State (fun _ => 0) [].

(* The threshold function: parameters and kernel to per-instance thresholds. *)
Definition thresholds (p : penv) (prog : block) : list out :=
  fst (walk_b p (fun _ => 0) prog init).

(* ---- The specification: need, straight from the trace. *)

Fixpoint spec (pre l : list inst) : list out :=
  match l with
  | [] => []
  | x :: r => (iid key x, map (fun f => (f, need pre f (ikeys key x))) (others (ieng key x)))
              :: spec (pre ++ [x]) r
  end.

Lemma spec_app : forall l1 pre l2, spec pre (l1 ++ l2) = spec pre l1 ++ spec (pre ++ l1) l2.
Proof.
  induction l1; simpl; intros. - rewrite app_nil_r. reflexivity.
  - rewrite IHl1, <- app_assoc. reflexivity.
Qed.

(* ---- The walk's invariant: positions are counts, lookups are needs. *)

Definition inv (pre : list inst) (w : state) :=
  (forall e, spos w e = cnt e pre) /\
  (forall f ys, lookup (stracked w) f ys = need pre f ys) /\
  (forall e k z, In (e, k, z) (stracked w) -> z <= cnt e pre).

Lemma lookup_prepend : forall e ks z tracked f ys,
  lookup (map (fun k => (e, k, z)) ks ++ tracked) f ys =
  if Nat.eqb e f && conflict ks ys then Z.max z (lookup tracked f ys) else lookup tracked f ys.
Proof.
  unfold conflict. induction ks; simpl; intros. - rewrite andb_false_r. reflexivity.
  - rewrite IHks.
    destruct (Nat.eqb e f); simpl; [|reflexivity].
    destruct (existsb (kc a) ys); simpl;
      destruct (existsb (fun x => existsb (kc x) ys) ks); simpl; try reflexivity; lia.
Qed.

Lemma lookup_filter : forall P tracked f ys,
  (forall e k z, In (e, k, z) tracked -> P (e, k, z) = false ->
     Nat.eqb e f && existsb (kc k) ys = false) ->
  lookup (filter P tracked) f ys = lookup tracked f ys.
Proof.
  induction tracked as [|[[e k] z] r IH]; simpl; intros f ys H; [reflexivity|].
  destruct (P (e, k, z)) eqn:E; simpl.
  - rewrite IH by (intros e' k' z' Hin HP; apply (H e' k' z'); auto). reflexivity.
  - rewrite (H e k z (or_introl eq_refl) E). apply IH.
    intros e' k' z' Hin HP; apply (H e' k' z'); auto.
Qed.

Lemma lookup_bound : forall tracked f ys b, 0 <= b ->
  (forall k z, In (f, k, z) tracked -> z <= b) -> lookup tracked f ys <= b.
Proof.
  induction tracked as [|[[e k] z] r IH]; simpl; intros f ys b Hb H; [lia|].
  destruct (Nat.eqb e f && existsb (kc k) ys) eqn:E.
  - apply andb_true_iff in E. destruct E as [E _]. apply Nat.eqb_eq in E. subst.
    apply Z.max_lub; [apply (H k z); auto | apply IH; auto].
    intros k' z' Hin; apply (H k' z'); auto.
  - apply IH; auto. intros k' z' Hin; apply (H k' z'); auto.
Qed.

Lemma lookup_record : forall e ks z tracked f ys, 0 <= z ->
  (forall k z', In (e, k, z') tracked -> z' < z) ->
  lookup (record e ks z tracked) f ys =
  if Nat.eqb e f && conflict ks ys then z else lookup tracked f ys.
Proof.
  intros e ks z tracked f ys Hz Hlt. unfold record. rewrite lookup_prepend.
  destruct (Nat.eqb e f && conflict ks ys) eqn:E.
  - apply andb_true_iff in E. destruct E as [E _]. apply Nat.eqb_eq in E. subst f.
    apply Z.max_l. apply lookup_bound; [assumption|]. intros k z' Hin. apply filter_In in Hin.
    pose proof (Hlt k z' (proj1 Hin)). lia.
  - apply lookup_filter. intros e' k z' Hin Hs. apply negb_false_iff in Hs. simpl in Hs.
    apply andb_true_iff in Hs. destruct Hs as [He Hk]. apply Nat.eqb_eq in He. subst e'.
    apply existsb_exists in Hk. destruct Hk as [k' [Hin' Hkk]]. apply key_eqb_eq in Hkk. subst k'.
    destruct (Nat.eqb e f) eqn:Ef; [|reflexivity]. simpl in E |- *.
    destruct (existsb (kc k) ys) eqn:Ec; [|reflexivity].
    assert (conflict ks ys = true) by (unfold conflict; apply existsb_exists; exists k; auto).
    congruence.
Qed.

Lemma inv_instr : forall pre w id e ks,
  inv pre w ->
  inv (pre ++ [Inst key id e ks])
      (State (upd (spos w) e (spos w e + 1)) (record e ks (spos w e + 1) (stracked w))).
Proof.
  intros pre w id e ks [Hp [Hl Hb]]. split; [|split]; simpl.
  - intros f. unfold upd. rewrite cnt_app. simpl.
    destruct (Nat.eqb f e) eqn:E; rewrite Nat.eqb_sym, E.
    + apply Nat.eqb_eq in E. subst. rewrite Hp. lia.
    + rewrite Hp. lia.
  - intros f ys. pose proof (cnt_nonneg key e pre).
    rewrite lookup_record, need_snoc; simpl.
    + rewrite Hl, Hp. destruct (Nat.eqb e f) eqn:E; simpl; [|reflexivity].
      apply Nat.eqb_eq in E. subst. destruct (conflict ks ys); reflexivity.
    + rewrite Hp. lia.
    + intros k z' Hin. pose proof (Hb e k z' Hin). rewrite Hp. lia.
  - intros f k z Hin. unfold record in Hin. rewrite in_app_iff, in_map_iff, filter_In in Hin.
    rewrite cnt_app. simpl. pose proof (cnt_nonneg key f pre).
    destruct Hin as [[k' [Heq _]] | [Hin _]].
    + injection Heq as E1 E2 E3. subst f z. rewrite Nat.eqb_refl, Hp. lia.
    + specialize (Hb f k z Hin). destruct (Nat.eqb e f); lia.
Qed.

Lemma iter_st_ok : forall (F : Z -> state -> list out * state) (T : Z -> list inst)
                          (Q : Z -> list inst -> Prop),
  (forall i pre w, Q i pre -> inv pre w ->
     fst (F i w) = spec pre (T i) /\ inv (pre ++ T i) (snd (F i w)) /\ Q (i + 1) (pre ++ T i)) ->
  forall n i pre w, Q i pre -> inv pre w ->
    fst (iter_st F n i w) = spec pre (iter T n i) /\
    inv (pre ++ iter T n i) (snd (iter_st F n i w)) /\ Q (i + Z.of_nat n) (pre ++ iter T n i).
Proof.
  intros F T Q HF. induction n; simpl; intros i pre w HQ Hi.
  - rewrite app_nil_r, Z.add_0_r. auto.
  - destruct (F i w) as [o1 w1] eqn:E1.
    destruct (HF i pre w HQ Hi) as [H1 [H2 H3]]. rewrite E1 in H1, H2. simpl in H1, H2.
    destruct (IHn (i + 1) (pre ++ T i) w1 H3 H2) as [H4 [H5 H6]].
    destruct (iter_st F n (i + 1) w1) as [o2 w2]. simpl in *.
    rewrite spec_app, H1, H4, app_assoc. split; [reflexivity|]. split; [exact H5|].
    replace (i + Z.pos (Pos.of_succ_nat n)) with (i + 1 + Z.of_nat n) by lia. exact H6.
Qed.

Lemma walk_correct : forall p,
  (forall s v pre w, inv pre w ->
     fst (walk_s p v s w) = spec pre (trace_s p v s) /\
     inv (pre ++ trace_s p v s) (snd (walk_s p v s w))) /\
  (forall b v pre w, inv pre w ->
     fst (walk_b p v b w) = spec pre (trace_b p v b) /\
     inv (pre ++ trace_b p v b) (snd (walk_b p v b w))).
Proof.
  intros p. apply stmt_block_ind; simpl; intros.
  - (* instruction *)
    destruct H as [Hp [Hl Hb]]. split.
    + f_equal. f_equal. apply map_ext. intros f. rewrite Hl. reflexivity.
    + apply inv_instr. split; auto.
  - (* loop *)
    change (trace_s p v (SFor acc l lo hi body)) with
      (iter (fun i => trace_b p (set v l i) body) (Z.to_nat (eval p v hi - eval p v lo)) (eval p v lo)).
    set (lo' := eval p v lo). set (n := Z.to_nat (eval p v hi - lo')).
    set (entry := spos w).
    set (Q := fun i pre' => forall e k, body_count body l e = Some k ->
                cnt e pre' = entry e + (i - lo') * evalk p v k).
    set (F := fun i w' => walk_b p (set v l i) body
                (State (fun e => match body_count body l e with
                                 | Some k => entry e + (i - lo') * evalk p v k
                                 | None => spos w' e end) (stracked w'))).
    assert (HF: forall i pre' w', Q i pre' -> inv pre' w' ->
      fst (F i w') = spec pre' (trace_b p (set v l i) body) /\
      inv (pre' ++ trace_b p (set v l i) body) (snd (F i w')) /\
      Q (i + 1) (pre' ++ trace_b p (set v l i) body)).
    { intros i pre' w' HQ [Hp [Hl Hb]].
      assert (Hi: inv pre' (State (fun e => match body_count body l e with
                                 | Some k => entry e + (i - lo') * evalk p v k
                                 | None => spos w' e end) (stracked w'))).
      { split; [|split]; simpl; auto.
        intros e. destruct (body_count body l e) as [k0|] eqn:E; [|auto]. rewrite (HQ e k0 E). reflexivity. }
      destruct (H (set v l i) pre' _ Hi) as [H1 H2]. split; [exact H1|]. split; [exact H2|].
      intros e k Hk. rewrite cnt_app, (HQ e k Hk).
      unfold body_count in Hk. destruct (count_b body e) as [k0|] eqn:E; [|discriminate].
      destruct (usesk l k0) eqn:U; [discriminate|]. injection Hk as <-.
      rewrite (proj2 count_correct body p (set v l i) e k0 E), evalk_set_unused by exact U. lia. }
    assert (HQ0: Q lo' pre).
    { intros e k _. destruct H0 as [Hp _]. unfold entry. rewrite Hp. lia. }
    destruct (iter_st_ok F (fun i => trace_b p (set v l i) body) Q HF n lo' pre w HQ0 H0)
      as [H1 [H2 H3]].
    fold lo'. fold n. fold entry. fold F.
    destruct (iter_st F n lo' w) as [o w2]. simpl in *. split; [exact H1|].
    destruct H2 as [Hp [Hl Hb]]. split; [|split]; simpl; auto.
    intros e. destruct (body_count body l e) as [k0|] eqn:E; [|apply Hp].
    rewrite (H3 e k0 E). unfold n. rewrite of_to_nat. lia.
  - (* conditional *)
    change (trace_s p v (SIf acc c t f)) with
      (if evalc p v c then trace_b p v t else trace_b p v f).
    destruct (evalc p v c); auto.
  - rewrite app_nil_r. auto.
  - destruct (walk_s p v s w) as [o1 w1] eqn:E1.
    destruct (H v pre w H1) as [Ha Hb]. rewrite E1 in Ha, Hb. simpl in Ha, Hb.
    destruct (H0 v (pre ++ trace_s p v s) w1 Hb) as [Hc Hd].
    destruct (walk_b p v rest w1) as [o2 w2]. simpl in *.
    change (trace_b p v (BCons acc s rest)) with (trace_s p v s ++ trace_b p v rest).
    rewrite spec_app, Ha, Hc, app_assoc. auto.
Qed.

(* Exactness: the thresholds the walk computes are, instance by instance,
   need_f of their consumer on every other engine f. *)
Theorem exactness : forall p prog, thresholds p prog = spec [] (trace acc key eval_acc p prog).
Proof.
  intros p prog. unfold thresholds, trace.
  apply (proj2 (walk_correct p) prog (fun _ => 0) [] init).
  split; [|split]; simpl; auto; intros; contradiction.
Qed.

(* The same, indexed: the k-th output is the k-th instance with need_f
   computed from the k instances before it. *)
Lemma spec_nth : forall l pre k x,
  nth_error l k = Some x ->
  nth_error (spec pre l) k =
  Some (iid key x, map (fun f => (f, need (pre ++ firstn k l) f (ikeys key x))) (others (ieng key x))).
Proof.
  induction l; intros pre [|k] x H; simpl in *; try discriminate.
  - injection H as <-. rewrite app_nil_r. reflexivity.
  - rewrite (IHl _ k x H), <- app_assoc. reflexivity.
Qed.

Corollary exactness_nth : forall p prog k x,
  nth_error (trace acc key eval_acc p prog) k = Some x ->
  nth_error (thresholds p prog) k =
  Some (iid key x, map (fun f => (f, need (firstn k (trace acc key eval_acc p prog)) f (ikeys key x)))
                       (others (ieng key x))).
Proof. intros. rewrite exactness. apply spec_nth. exact H. Qed.

End Transform.

(* Pipeline.v: pipelined queues (a dma engine with dma_outstanding > 1),
   and Soundness, Progress and Exactness for them.

   Machine.v's ops are atomic. A pipelined queue is still in order, but
   only its issue is: engine c issues the op of its group g once the waits
   before it have passed (as in Machine.v), once fewer than depth c of its
   ops are in flight (issued, not counted complete), and once none of its
   own in-flight ops conflicts with it (the queue keeps its own
   dependences: runtime/sim.c and docs/runtime.md, "Pipelined queues and
   the memory contract"). Completion is counted in order: a PComplete step
   adds 1 to the counter S_c = pdone c, and the op it counts is the oldest
   in flight. An op's memory effect lies between its issue and the
   completion that counts it (an effect that is done sooner is only
   safer). depth c = 1 is Machine.v's atomic engine with its op split into
   issue and completion; the theorems hold for any depth c >= 1 per engine.

   Theorems:
   - pipeline_soundness: for any waits that cover the needs (the
     transform's, or any the validator accepts: Validate.check_covers),
     when an op issues, every earlier conflicting instance in program
     order, on another engine or on its own, has completed (counted);
   - pipeline_progress: with waits that ask only for earlier producers, a
     reachable state with an op left to issue or to complete can step;
   - pipeline_not_late: each accepted wait holds once the instances its
     instance conflicts with on that engine have completed, since S_f
     counts completions as Machine.v's done does;
   - pipeline_narrow_unwrapped, and Section NarrowPipeline's q_ theorems:
     the same machine with B-bit counters read by extension and
     back-pressure at issue is sound and never late, wrapping or not, and
     makes progress while no counter wraps. *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
From BF Require Import Model Machine Narrow Validate.
Open Scope Z_scope.

Section Pipeline.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable depth : nat -> nat. (* per engine: ops in flight at once *)
Hypothesis depth_pos : forall c, (1 <= depth c)%nat.

Notation groups := (groups key tr).
Notation eng_at := (eng_at key tr).
Notation conflict := (conflict key kc).

Record pstate := PState { issued : nat -> nat; pdone : nat -> nat; ppassed : nat -> nat }.

(* Engine c's ops of groups g and h conflict (h's accesses with g's). *)
Definition self_conflict (c g h : nat) : bool :=
  match nth_error (groups c) g, nth_error (groups c) h with
  | Some k, Some j =>
      match nth_error tr k, nth_error tr j with
      | Some xk, Some xj => conflict (ikeys key xj) (ikeys key xk)
      | _, _ => false
      end
  | _, _ => false
  end.

Inductive pstep : pstate -> nat -> pstate -> Prop :=
| PWait : forall st c k f T,
    nth_error (groups c) (issued st c) = Some k ->
    nth_error (W k) (ppassed st c) = Some (f, T) ->
    Z.geb (Z.of_nat (pdone st f)) T = true ->
    pstep st c (PState (issued st) (pdone st) (bump (ppassed st) c (S (ppassed st c))))
| PIssue : forall st c k,
    nth_error (groups c) (issued st c) = Some k ->
    ppassed st c = length (W k) ->
    (issued st c < pdone st c + depth c)%nat ->
    (forall h, (pdone st c <= h < issued st c)%nat -> self_conflict c (issued st c) h = false) ->
    pstep st c (PState (bump (issued st) c (S (issued st c))) (pdone st) (bump (ppassed st) c 0))
| PComplete : forall st c,
    (pdone st c < issued st c)%nat ->
    pstep st c (PState (issued st) (bump (pdone st) c (S (pdone st c))) (ppassed st)).

Definition pinit := PState (fun _ => 0%nat) (fun _ => 0%nat) (fun _ => 0%nat).

Inductive preachable : pstate -> Prop :=
| PReachInit : preachable pinit
| PReachStep : forall st c st', preachable st -> pstep st c st' -> preachable st'.

(* ---- The invariant: counts trail issues, and every wait passed holds. *)

Definition pholds (st : pstate) :=
  (forall c, (pdone st c <= issued st c <= length (groups c))%nat) /\
  forall c g k, nth_error (groups c) g = Some k ->
    ((g < issued st c)%nat -> forall f T, In (f, T) (W k) -> T <= Z.of_nat (pdone st f)) /\
    (g = issued st c -> (ppassed st c <= length (W k))%nat /\
       forall i f T, (i < ppassed st c)%nat -> nth_error (W k) i = Some (f, T) ->
         T <= Z.of_nat (pdone st f)).

Lemma pstep_mono : forall st c st' e, pstep st c st' -> (pdone st e <= pdone st' e)%nat.
Proof.
  intros st c st' e H. destruct H; simpl; unfold bump; try lia.
  destruct (Nat.eqb e c) eqn:E; [apply Nat.eqb_eq in E; subst|]; lia.
Qed.

Lemma preachable_holds : forall st, preachable st -> pholds st.
Proof.
  induction 1 as [|st c st' R IH S].
  - split; [intros c; unfold pinit; simpl; split; [lia | apply Nat.le_0_l]|].
    intros c g k _. simpl. split; [lia|]. intros ->. split; [lia|]. intros; lia.
  - pose proof (fun e => pstep_mono _ _ _ e S) as Mono. destruct IH as [Hb IH].
    inversion S as [st0 c0 k f T Hg HW Hge | st0 c0 k Hg Hp Hdep Hself | st0 c0 Hlt]; subst.
    + (* a wait *)
      split; [exact Hb|]. intros c' g k' Hg'. simpl in *.
      destruct (IH c' g k' Hg') as [H1 H2]. split; [exact H1|].
      intros Heq. unfold bump in *. destruct (Nat.eqb c' c) eqn:E.
      * apply Nat.eqb_eq in E. subst c'. rewrite Heq in Hg'. rewrite Hg in Hg'.
        injection Hg' as <-. destruct (H2 Heq) as [Hl H3].
        assert (ppassed st c < length (W k))%nat by (apply nth_error_Some; congruence).
        split; [lia|]. intros i f' T' Hi Hn.
        destruct (Nat.eq_dec i (ppassed st c)).
        -- subst i. rewrite HW in Hn. injection Hn as <- <-. apply Z.geb_le. exact Hge.
        -- apply (H3 i); [lia | exact Hn].
      * exact (H2 Heq).
    + (* an issue *)
      split.
      * intros c'. simpl. unfold bump. specialize (Hb c').
        destruct (Nat.eqb c' c) eqn:E; [|lia]. apply Nat.eqb_eq in E. subst c'.
        assert (issued st c < length (groups c))%nat by (apply nth_error_Some; congruence). lia.
      * intros c' g k' Hg'. simpl in *. destruct (IH c' g k' Hg') as [H1 H2]. unfold bump in *.
        destruct (Nat.eqb c' c) eqn:E.
        -- apply Nat.eqb_eq in E. subst c'. split.
           ++ intros Hlt f T Hin. destruct (Nat.eq_dec g (issued st c)).
              ** subst g. rewrite Hg in Hg'. injection Hg' as <-.
                 destruct (H2 eq_refl) as [_ H3]. destruct (In_nth_error _ _ Hin) as [i Hi].
                 assert (i < length (W k))%nat by (apply nth_error_Some; congruence).
                 apply (H3 i f T ltac:(lia) Hi).
              ** apply H1; [lia | exact Hin].
           ++ intros Heq. split; [lia|]. intros; lia.
        -- split; [exact H1 | exact H2].
    + (* a completion *)
      split.
      * intros c'. simpl. unfold bump. specialize (Hb c').
        destruct (Nat.eqb c' c) eqn:E; [apply Nat.eqb_eq in E; subst c'; lia | lia].
      * intros c' g k' Hg'. simpl in *. destruct (IH c' g k' Hg') as [H1 H2]. split.
        -- intros Hl f T Hin. pose proof (H1 Hl f T Hin). specialize (Mono f). simpl in Mono. lia.
        -- intros Heq. destruct (H2 Heq) as [Hl H3]. split; [exact Hl|].
           intros i f T Hi Hn. pose proof (H3 i f T Hi Hn). specialize (Mono f). simpl in Mono. lia.
Qed.

(* c is issuing, or has issued, the op of its group g. *)
Definition pat_or_past (st : pstate) (c g : nat) :=
  (g < issued st c)%nat \/
  (g = issued st c /\ exists k, nth_error (groups c) g = Some k /\ ppassed st c = length (W k)).

Lemma pwait_holds : forall st c g g' k f T, pholds st -> pat_or_past st c g -> (g' <= g)%nat ->
  nth_error (groups c) g' = Some k -> In (f, T) (W k) -> T <= Z.of_nat (pdone st f).
Proof.
  intros st c g g' k f T [_ H] [Hlt | [Heq [k' [Hk' Hp]]]] Hle Hg Hin.
  - apply (proj1 (H c g' k Hg)); [lia | exact Hin].
  - destruct (Nat.eq_dec g' g).
    + subst g'. rewrite Hk' in Hg. injection Hg as <-.
      destruct (proj2 (H c g k' Hk') Heq) as [_ H3]. destruct (In_nth_error _ _ Hin) as [i Hi].
      assert (i < length (W k'))%nat by (apply nth_error_Some; congruence).
      apply (H3 i); [lia | exact Hi].
    + apply (proj1 (H c g' k Hg)); [lia | exact Hin].
Qed.

(* What the waits imply holds on the counts, except an engine's own count
   at its own issue, which may trail its issues by the ops in flight. *)
Lemma pimplied_holds : forall c g e T, implied key tr W c g e T ->
  forall st, pholds st -> pat_or_past st c g ->
  T <= Z.of_nat (pdone st e) \/ (e = c /\ T <= Z.of_nat g).
Proof.
  induction 1; intros st Hh Hp.
  - left. pose proof (Nat2Z.is_nonneg (pdone st e)). lia.
  - left. pose proof (pwait_holds st c g g' k e T' Hh Hp H H0 H1). lia.
  - right. auto.
  - pose proof (pwait_holds st c g g' k f Tf Hh Hp H H0 H1) as Hf.
    assert (Hb: (pdone st f <= issued st f)%nat) by apply (proj1 Hh f).
    assert (Hpf: pat_or_past st f (Z.to_nat (Tf - 1))) by (left; lia).
    destruct (IHimplied st Hh Hpf) as [A | [E A]].
    + left. exact A.
    + left. subst e. lia.
Qed.

(* The instance at index j has completed: its completion is counted. *)
Definition pcompleted (st : pstate) (j : nat) :=
  exists g, nth_error (groups (eng_at j)) g = Some j /\ (g < pdone st (eng_at j))%nat.

(* Group indices follow program order. *)
Lemma group_order : forall c h g j k, nth_error (groups c) h = Some j -> nth_error (groups c) g = Some k ->
  (j < k)%nat -> (h < g)%nat.
Proof.
  intros c h g j k Hj Hk Hjk.
  destruct (gidx_of_group key tr c h j Hj) as [G1 E1]. destruct (gidx_of_group key tr c g k Hk) as [G2 E2].
  subst h g. unfold gidx. rewrite E1, E2.
  replace k with (j + S (k - S j))%nat by lia. rewrite seq_app, filter_app, app_length. simpl.
  rewrite E1, Nat.eqb_refl. simpl. lia.
Qed.

Theorem pipeline_soundness : covers key kc tr W ->
  forall st c st', preachable st -> pstep st c st' -> issued st' c <> issued st c ->
  forall k xk, nth_error (groups c) (issued st c) = Some k -> nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x ->
  conflict (ikeys key x) (ikeys key xk) = true -> pcompleted st j.
Proof.
  intros Hcov st c st' R S Hiss k xk Hg Hk j x Hj Hx Hc.
  pose proof (preachable_holds st R) as Hh.
  inversion S as [st0 c0 k0 f T Hg0 HW Hge | st0 c0 k0 Hg0 Hp Hdep Hself | st0 c0 Hlt]; subst;
    simpl in Hiss; unfold bump in Hiss; try (rewrite Nat.eqb_refl in Hiss; lia); try (exfalso; apply Hiss; reflexivity).
  rewrite Hg0 in Hg. injection Hg as ->.
  destruct (Nat.eq_dec (ieng key x) c) as [Same|Other].
  - (* its own engine: in flight and conflicting is excluded at issue *)
    pose proof (group_index key tr j x Hx) as Gj. rewrite Same in Gj.
    set (h := Z.to_nat (cnt key c (firstn j tr))) in *.
    pose proof (group_order c h (issued st c) j k Gj Hg0 Hj) as Hhg.
    exists h. rewrite (eng_at_nth key tr j x Hx), Same. split; [exact Gj|].
    destruct (Nat.lt_ge_cases h (pdone st c)) as [L|L]; [exact L|].
    exfalso. specialize (Hself h (conj L Hhg)). unfold self_conflict in Hself.
    rewrite Hg0, Gj, Hk, Hx, Hc in Hself. discriminate.
  - (* another engine: the waits *)
    pose proof (Hcov c (issued st c) k xk j x Hg0 Hk Hj Hx Other Hc) as Himp.
    destruct (pimplied_holds _ _ _ _ Himp st Hh
                (or_intror (conj eq_refl (ex_intro _ k (conj Hg0 Hp))))) as [Hd | [E _]];
      [|contradiction].
    exists (Z.to_nat (cnt key (ieng key x) (firstn j tr))).
    rewrite (eng_at_nth key tr j x Hx). split; [apply group_index; exact Hx|].
    pose proof (cnt_nonneg key (ieng key x) (firstn j tr)). lia.
Qed.

(* ---- Progress. *)

Lemma pbusy_engine : forall st c, pholds st -> (0 < issued st c)%nat -> In c (map (ieng key) tr).
Proof.
  intros st c [Hb _] H. specialize (Hb c).
  destruct (groups c) as [|k r] eqn:G; [simpl in Hb; lia|].
  assert (Hin: In k (groups c)) by (rewrite G; left; reflexivity).
  destruct (nth_error tr k) as [x|] eqn:E.
  - apply in_map_iff. exists x. split.
    + unfold groups, Machine.groups in Hin. apply filter_In in Hin. destruct Hin as [_ Hin].
      apply Nat.eqb_eq in Hin. rewrite (eng_at_nth key tr k x E) in Hin. exact Hin.
    + apply nth_error_In with k. exact E.
  - unfold groups, Machine.groups in Hin. apply filter_In in Hin. destruct Hin as [Hin _].
    apply in_seq in Hin. apply nth_error_None in E. lia.
Qed.

Theorem pipeline_progress : earlier_only key tr W ->
  forall st, preachable st ->
  forall c, (exists k, nth_error (groups c) (issued st c) = Some k) \/ (pdone st c < issued st c)%nat ->
  exists c' st', pstep st c' st'.
Proof.
  intros Hearly st R. pose proof (preachable_holds st R) as H.
  destruct (existsb (fun e => Nat.ltb (pdone st e) (issued st e)) (map (ieng key) tr)) eqn:Busy.
  - apply existsb_exists in Busy. destruct Busy as [e [_ Be]]. apply Nat.ltb_lt in Be.
    intros _ _. exists e. eexists. apply PComplete. exact Be.
  - (* nothing in flight anywhere: Machine.v's argument *)
    assert (Idle: forall e, pdone st e = issued st e).
    { intros e. pose proof (proj1 H e).
      destruct (Nat.eq_dec (issued st e) 0); [lia|].
      pose proof (pbusy_engine st e H ltac:(lia)) as Ine.
      destruct (Nat.lt_ge_cases (pdone st e) (issued st e)) as [L|L]; [|lia].
      assert (existsb (fun e => Nat.ltb (pdone st e) (issued st e)) (map (ieng key) tr) = true)
        by (apply existsb_exists; exists e; split; [exact Ine | apply Nat.ltb_lt; exact L]).
      congruence. }
    intros c [[k Hg] | L]; [|rewrite Idle in L; lia].
    revert c Hg. induction k as [k IH] using lt_wf_ind. intros c Hg.
    destruct (proj2 (proj2 H c (issued st c) k Hg) eq_refl) as [Hl _].
    destruct (Nat.eq_dec (ppassed st c) (length (W k))) as [Heq|Hne].
    + exists c. eexists. eapply PIssue; try eassumption.
      * rewrite Idle. specialize (depth_pos c). lia.
      * intros h Hr. rewrite Idle in Hr. lia.
    + destruct (nth_error (W k) (ppassed st c)) as [[f T]|] eqn:HW;
        [|apply nth_error_None in HW; lia].
      destruct (Z.geb (Z.of_nat (pdone st f)) T) eqn:Hge.
      * exists c. eexists. eapply PWait; eassumption.
      * apply geb_false in Hge.
        destruct (groups_in key tr c (issued st c) k Hg) as [Hk _].
        destruct (nth_error tr k) as [xk|] eqn:Exk; [|apply nth_error_None in Exk; lia].
        pose proof (Hearly k xk f T Exk (nth_error_In _ _ HW)) as Hle.
        destruct (group_before key tr f (pdone st f) k ltac:(lia) ltac:(lia)) as [k' [Hk' Hlt]].
        rewrite Idle in Hk'. exact (IH k' Hlt f Hk').
Qed.

(* ---- B-bit counters on a pipelined queue, while they do not wrap.

   A B-bit counter holds S_f mod 2^B, and a consumer extends its reads
   from seen, a count of S_f it read before (0 <= seen <= S_f: counts only
   grow). When engine f runs fewer than 2^B ops in all, S_f never reaches
   2^B, so every such read, extended, is the whole count, in every
   reachable state of the pipelined machine: the B-bit pipelined queue
   decides every wait as this file's machine does, and its theorems hold
   for it unchanged. bfcheck checks the premise on each run it validates
   (its `unwrapped` verdict); a run whose counters wrap on a pipelined
   queue is outside this theorem (docs/proof.md, section 5). *)
Theorem pipeline_narrow_unwrapped : forall B st f seen, preachable st ->
  Z.of_nat (length (groups f)) < 2 ^ Z.of_nat B -> 0 <= seen <= Z.of_nat (pdone st f) ->
  extend B seen (Z.of_nat (pdone st f) mod 2 ^ Z.of_nat B) = Z.of_nat (pdone st f).
Proof.
  intros B st f seen R Hlen Hseen. apply extend_exact.
  destruct (preachable_holds st R) as [Hb _]. specialize (Hb f).
  assert (Z.of_nat (pdone st f) <= Z.of_nat (length (groups f))) by (apply Nat2Z.inj_le; lia).
  lia.
Qed.

End Pipeline.

(* ---- The validator's waits on pipelined queues. *)

Section Validated.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable ne : nat.
Variable nd : nat -> nat -> Z.
Hypothesis nd_ok : forall k xk f, nth_error tr k = Some xk -> f <> ieng key xk -> (f < ne)%nat ->
  nd k f = need key kc (firstn k tr) f (ikeys key xk).
Variable depth : nat -> nat.
Hypothesis depth_pos : forall c, (1 <= depth c)%nat.

Theorem pipeline_check_soundness : check key tr W ne nd = true ->
  forall st c st', preachable key kc tr W depth st -> pstep key kc tr W depth st c st' -> issued st' c <> issued st c ->
  forall k xk, nth_error (groups key tr c) (issued st c) = Some k -> nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> pcompleted key tr st j.
Proof. intros V. exact (pipeline_soundness key kc tr W depth (check_covers key kc tr W ne nd nd_ok V)). Qed.

Theorem pipeline_check_progress : check key tr W ne nd = true ->
  forall st, preachable key kc tr W depth st ->
  forall c, (exists k, nth_error (groups key tr c) (issued st c) = Some k) \/ (pdone st c < issued st c)%nat ->
  exists c' st', pstep key kc tr W depth st c' st'.
Proof. intros V. exact (pipeline_progress key kc tr W depth depth_pos (check_earlier key kc tr W ne nd nd_ok V)). Qed.

(* Never late: S_f counts completions as Machine.v's done does, so
   Validate.check_exact's bound applies to the pipelined counts. *)
Theorem pipeline_not_late : check key tr W ne nd = true ->
  forall st k xk f T, nth_error tr k = Some xk -> In (f, T) (W k) ->
  (forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x = f ->
     conflict key kc (ikeys key x) (ikeys key xk) = true -> pcompleted key tr st j) ->
  T <= Z.of_nat (pdone st f).
Proof.
  intros V st k xk f T Hk Hin Hdone.
  exact (proj2 (check_exact key kc tr W ne nd nd_ok V) (MState (pdone st) (fun _ => 0%nat)) k xk f T Hk Hin Hdone).
Qed.

End Validated.

(* ---- B-bit counters on pipelined queues, wrapping or not.

   The machine of Section Pipeline with Narrow.v's counters: each counter
   holds S_e mod 2^B, and engine c reads S_e by extending those bits from
   seen c e, the count it last read (bfrt_counter_extend). The steps:
   - QRead: c reads a counter it tracks; seen c e becomes the extended
     read. QRaise: seen c e becomes the count S_e (a producer's rt_saw on
     an idle consumer's behalf). Either may happen at any time, so every
     choice of the executors is covered;
   - QPass: c's next wait S_f >= T passes when its extended read of S_f is
     at least T; seen c f is that read, and known c f rises to T;
     QGuard: it passes because T <= known c f (bf_wait's guard);
   - QIssue: Section Pipeline's issue, with back-pressure as runtime/sim.c
     checks it at issue: the op that will make S_c = n issues only when
     every consumer of c has seen at least n - (2^B - 1);
   - QComplete: the oldest op in flight completes, S_c rises by 1.
   A block or a hold changes no state here, so it is left out.

   Theorems: q_window (in every reachable state, for every tracked pair,
   seen c e <= S_e and the ops e issued stay below seen c e + 2^B),
   q_read_exact (so every extended read is the whole count), q_refines
   (the projection to issued, pdone and ppassed is a reachable state of
   Section Pipeline's machine), q_soundness (never early, for any waits
   that cover the needs), and q_check_not_late (a validated wait passes on
   B bits once what its instance needs has completed),
   q_progress_unwrapped (while no engine runs 2^B ops, every step of
   Section Pipeline's machine is a step here) and q_no_deadlock (wrapping
   or not, from every reachable state with work left some execution takes
   such a step, after its consumers read or are raised). Not proved: that
   every execution goes on (no livelock) and finishes, which Narrow.v
   proves for atomic ops (stutter_bound, narrow_terminates) and was not
   redone for pipelined queues (docs/proof.md, section 5). *)
Section NarrowPipeline.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable depth : nat -> nat.
Variable B : nat.
Variable tracks : nat -> nat -> bool.
Hypothesis B_pos : (1 <= B)%nat.

Notation groups := (groups key tr).

Record qstate := QState { qp : pstate; qseen : nat -> nat -> Z; qknown : nat -> nat -> Z }.

Definition qmod : Z := 2 ^ Z.of_nat B.
Definition qcount (st : qstate) (e : nat) : Z := Z.of_nat (pdone (qp st) e).
Definition qread (st : qstate) (c e : nat) : Z := extend B (qseen st c e) (qcount st e mod qmod).

Definition set2 (g : nat -> nat -> Z) (c e : nat) (z : Z) : nat -> nat -> Z :=
  fun c' e' => if Nat.eqb c' c && Nat.eqb e' e then z else g c' e'.

Inductive qstep : qstate -> nat -> qstate -> Prop :=
| QRead : forall st c e, tracks c e = true ->
    qstep st c (QState (qp st) (set2 (qseen st) c e (qread st c e)) (qknown st))
| QRaise : forall st c e, tracks c e = true ->
    qstep st e (QState (qp st) (set2 (qseen st) c e (qcount st e)) (qknown st))
| QPass : forall st c k f T,
    nth_error (groups c) (issued (qp st) c) = Some k ->
    nth_error (W k) (ppassed (qp st) c) = Some (f, T) ->
    tracks c f = true -> T <= qread st c f ->
    qstep st c (QState (PState (issued (qp st)) (pdone (qp st)) (bump (ppassed (qp st)) c (S (ppassed (qp st) c))))
                       (set2 (qseen st) c f (qread st c f)) (set2 (qknown st) c f (Z.max (qknown st c f) T)))
| QGuard : forall st c k f T,
    nth_error (groups c) (issued (qp st) c) = Some k ->
    nth_error (W k) (ppassed (qp st) c) = Some (f, T) ->
    T <= qknown st c f ->
    qstep st c (QState (PState (issued (qp st)) (pdone (qp st)) (bump (ppassed (qp st)) c (S (ppassed (qp st) c))))
                       (qseen st) (qknown st))
| QIssue : forall st c k,
    nth_error (groups c) (issued (qp st) c) = Some k ->
    ppassed (qp st) c = length (W k) ->
    (issued (qp st) c < pdone (qp st) c + depth c)%nat ->
    (forall h, (pdone (qp st) c <= h < issued (qp st) c)%nat -> self_conflict key kc tr c (issued (qp st) c) h = false) ->
    (forall c', tracks c' c = true -> Z.of_nat (S (issued (qp st) c)) <= qseen st c' c + (qmod - 1)) ->
    qstep st c (QState (PState (bump (issued (qp st)) c (S (issued (qp st) c))) (pdone (qp st)) (bump (ppassed (qp st)) c 0))
                       (qseen st) (qknown st))
| QComplete : forall st c,
    (pdone (qp st) c < issued (qp st) c)%nat ->
    qstep st c (QState (PState (issued (qp st)) (bump (pdone (qp st)) c (S (pdone (qp st) c))) (ppassed (qp st)))
                       (qseen st) (qknown st)).

Definition qinit := QState pinit (fun _ _ => 0) (fun _ _ => 0).

Inductive qreachable : qstate -> Prop :=
| QReachInit : qreachable qinit
| QReachStep : forall st c st', qreachable st -> qstep st c st' -> qreachable st'.

(* The window, and what the guard relies on. *)
Definition qinv (st : qstate) :=
  preachable key kc tr W depth (qp st) /\
  (forall c e, tracks c e = true ->
     0 <= qseen st c e <= qcount st e /\ Z.of_nat (issued (qp st) e) < qseen st c e + qmod) /\
  (forall c f, 0 <= qknown st c f <= qcount st f).

Lemma qmod_pos : 0 < qmod.
Proof. unfold qmod. apply Z.pow_pos_nonneg; lia. Qed.

Lemma qread_in_window : forall st c e, qinv st -> tracks c e = true -> qread st c e = qcount st e.
Proof.
  intros st c e [R [Hw _]] Ht. destruct (Hw c e Ht) as [H1 H2].
  destruct (preachable_holds key kc tr W depth _ R) as [Hb _]. specialize (Hb e).
  unfold qread. apply extend_exact. unfold qcount in *. fold qmod. lia.
Qed.

Lemma set2_cases : forall (g : nat -> nat -> Z) c e z c' e',
  set2 g c e z c' e' = if Nat.eqb c' c && Nat.eqb e' e then z else g c' e'.
Proof. reflexivity. Qed.

Lemma bump_ge : forall g c z e, (g c <= z)%nat -> (g e <= bump g c z e)%nat.
Proof. intros g c z e H. unfold bump. destruct (Nat.eqb e c) eqn:E; [apply Nat.eqb_eq in E; subst|]; lia. Qed.

Lemma qinit_inv : qinv qinit.
Proof.
  split; [apply PReachInit|]. unfold qcount, qinit, pinit; simpl.
  pose proof qmod_pos. split; intros; lia.
Qed.

Lemma qstep_inv : forall st c st', qinv st -> qstep st c st' -> qinv st'.
Proof.
  intros st0 c0 st1 I S. pose proof I as [Rp [Hw Hk]].
  destruct S as [st c e Ht | st c e Ht | st c k f T Hg HW Ht HT
                | st c k f T Hg HW HT | st c k Hg Hp Hdep Hself Hbp | st c Hlt]; simpl.
  - (* a read *)
    rewrite (qread_in_window st c e I Ht).
    split; [exact Rp|]. split; [|exact Hk]. intros c' e' Ht'. unfold qcount in *; simpl.
    rewrite set2_cases. destruct (Nat.eqb c' c && Nat.eqb e' e) eqn:E.
    + apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1, E2. subst.
      destruct (Hw c e Ht) as [H1 H2]. lia.
    + exact (Hw c' e' Ht').
  - (* a raise *)
    split; [exact Rp|]. split; [|exact Hk]. intros c' e' Ht'. unfold qcount in *; simpl.
    rewrite set2_cases. destruct (Nat.eqb c' c && Nat.eqb e' e) eqn:E.
    + apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1, E2. subst.
      destruct (Hw c e Ht) as [H1 H2]. lia.
    + exact (Hw c' e' Ht').
  - (* a pass on an extended read *)
    rewrite (qread_in_window st c f I Ht) in HT |- *.
    split; [|split].
    + apply (PReachStep _ _ _ _ _ (qp st) c _ Rp). apply (PWait _ _ _ _ _ (qp st) c k f T Hg HW).
      apply Z.geb_le. exact HT.
    + intros c' e' Ht'. unfold qcount in *; simpl.
      rewrite set2_cases. destruct (Nat.eqb c' c && Nat.eqb e' f) eqn:E.
      * apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1, E2. subst.
        destruct (Hw c f Ht) as [H1 H2]. lia.
      * exact (Hw c' e' Ht').
    + intros c' f'. unfold qcount in *; simpl. rewrite set2_cases.
      destruct (Nat.eqb c' c && Nat.eqb f' f) eqn:E.
      * apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1, E2. subst.
        specialize (Hk c f). lia.
      * exact (Hk c' f').
  - (* a pass by the guard *)
    split; [|split].
    + apply (PReachStep _ _ _ _ _ (qp st) c _ Rp). apply (PWait _ _ _ _ _ (qp st) c k f T Hg HW).
      apply Z.geb_le. specialize (Hk c f). unfold qcount in Hk. lia.
    + intros c' e' Ht'. exact (Hw c' e' Ht').
    + exact Hk.
  - (* an issue, with back-pressure *)
    split; [|split].
    + apply (PReachStep _ _ _ _ _ (qp st) c _ Rp). apply (PIssue _ _ _ _ _ (qp st) c k Hg Hp Hdep Hself).
    + intros c' e' Ht'. unfold qcount in *; simpl. destruct (Hw c' e' Ht') as [H1 H2]. split; [exact H1|].
      unfold bump. destruct (Nat.eqb e' c) eqn:E; [|exact H2].
      apply Nat.eqb_eq in E. subst e'. specialize (Hbp c' Ht'). lia.
    + exact Hk.
  - (* a completion *)
    assert (Hm: forall e, (pdone (qp st) e <= bump (pdone (qp st)) c (S (pdone (qp st) c)) e)%nat)
      by (intros e; apply bump_ge; lia).
    split; [|split].
    + apply (PReachStep _ _ _ _ _ (qp st) c _ Rp). apply (PComplete _ _ _ _ _ (qp st) c Hlt).
    + intros c' e' Ht'. unfold qcount in *; simpl. destruct (Hw c' e' Ht') as [H1 H2].
      specialize (Hm e'). split; [|exact H2]. split; [lia|]. apply (Z.le_trans _ _ _ (proj2 H1)). lia.
    + intros c' f'. unfold qcount in *; simpl. specialize (Hk c' f'). specialize (Hm f'). lia.
Qed.

Theorem q_window : forall st, qreachable st -> qinv st.
Proof.
  induction 1 as [|st c st' R IH S]; [exact qinit_inv | exact (qstep_inv st c st' IH S)].
Qed.

Theorem q_read_exact : forall st c e, qreachable st -> tracks c e = true -> qread st c e = qcount st e.
Proof. intros st c e R Ht. exact (qread_in_window st c e (q_window st R) Ht). Qed.

Theorem q_refines : forall st, qreachable st -> preachable key kc tr W depth (qp st).
Proof. intros st R. exact (proj1 (q_window st R)). Qed.

(* Each step is a step of Section Pipeline's machine, or changes neither
   issued, pdone nor ppassed. *)
Lemma qstep_proj : forall st c st', qreachable st -> qstep st c st' ->
  qp st' = qp st \/ pstep key kc tr W depth (qp st) c (qp st').
Proof.
  intros st c st' R S. pose proof (q_window st R) as I. destruct I as [_ [_ Hk]].
  destruct S as [st c e Ht | st c e Ht | st c k f T Hg HW Ht HT | st c k f T Hg HW HT
                | st c k Hg Hp Hdep Hself Hbp | st c Hlt]; simpl; auto.
  - right. apply (PWait _ _ _ _ _ (qp st) c k f T Hg HW). apply Z.geb_le.
    rewrite (qread_in_window st c f (q_window st R) Ht) in HT. exact HT.
  - right. apply (PWait _ _ _ _ _ (qp st) c k f T Hg HW). apply Z.geb_le.
    specialize (Hk c f). unfold qcount in Hk. lia.
  - right. exact (PIssue _ _ _ _ _ (qp st) c k Hg Hp Hdep Hself).
  - right. exact (PComplete _ _ _ _ _ (qp st) c Hlt).
Qed.

(* Never early on B bits, wrapping or not: when an op issues, every
   earlier conflicting instance in program order has completed. *)
Theorem q_soundness : covers key kc tr W ->
  forall st c st', qreachable st -> qstep st c st' -> issued (qp st') c <> issued (qp st) c ->
  forall k xk, nth_error (groups c) (issued (qp st) c) = Some k -> nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> pcompleted key tr (qp st) j.
Proof.
  intros Hc st c st' R S Hi. destruct (qstep_proj st c st' R S) as [E | P].
  - rewrite E in Hi. contradiction.
  - exact (pipeline_soundness key kc tr W depth Hc (qp st) c (qp st') (q_refines st R) P Hi).
Qed.

(* Progress while no counter wraps: when every engine runs fewer than 2^B
   ops and every counter a stream waits on is one its engine tracks, the
   back-pressure check always holds and every read is exact, so each step
   Section Pipeline's machine can take has its counterpart here. *)
Theorem q_progress_unwrapped : (forall c, (1 <= depth c)%nat) -> earlier_only key tr W ->
  (forall c, Z.of_nat (length (groups c)) < qmod) ->
  (forall c g k i f T, nth_error (groups c) g = Some k -> nth_error (W k) i = Some (f, T) -> tracks c f = true) ->
  forall st, qreachable st ->
  forall c, (exists k, nth_error (groups c) (issued (qp st) c) = Some k) \/ (pdone (qp st) c < issued (qp st) c)%nat ->
  exists c' st', qstep st c' st'.
Proof.
  intros Hd He Hlen Ht st R c Hw. pose proof (q_window st R) as I. pose proof I as [Rp [Hwin Hk]].
  destruct (pipeline_progress key kc tr W depth Hd He (qp st) Rp c Hw) as [c' [p' P]].
  inversion P as [p c1 k f T Hg HW HT | p c1 k Hg Hp Hdep Hself | p c1 Hlt]; subst.
  - pose proof (Ht c' _ k _ f T Hg HW) as Hf.
    exists c'. eexists. apply (QPass st c' k f T Hg HW Hf).
    rewrite (qread_in_window st c' f I Hf). unfold qcount. apply Z.geb_le. exact HT.
  - exists c'. eexists. apply (QIssue st c' k Hg Hp Hdep Hself).
    intros c2 Hc2. destruct (Hwin c2 c' Hc2) as [[H0 _] _].
    assert (issued (qp st) c' < length (groups c'))%nat by (apply nth_error_Some; congruence).
    specialize (Hlen c'). lia.
  - exists c'. eexists. exact (QComplete st c' Hlt).
Qed.

(* ---- No deadlock, wrapping or not: from every reachable state with work
   left, some execution takes a step of Section Pipeline's machine (a
   pass, an issue or a completion), after raising, if an issue needs it,
   what the producer's consumers have seen to its count. *)
Inductive qsteps : qstate -> qstate -> Prop :=
| QStay : forall st, qsteps st st
| QMore : forall st c st1 st2, qstep st c st1 -> qsteps st1 st2 -> qsteps st st2.

Lemma qsteps_reachable : forall st st', qsteps st st' -> qreachable st -> qreachable st'.
Proof. induction 1; intros R; [exact R | apply IHqsteps; exact (QReachStep _ _ _ R H)]. Qed.

Definition qraise (st : qstate) (c e : nat) : qstate :=
  QState (qp st) (set2 (qseen st) c e (qcount st e)) (qknown st).

(* e raises every consumer of l that tracks it. *)
Fixpoint qraise_all (st : qstate) (e : nat) (l : list nat) : qstate :=
  match l with
  | [] => st
  | c :: r => qraise_all (if tracks c e then qraise st c e else st) e r
  end.

Lemma qraise_all_qp : forall l st e, qp (qraise_all st e l) = qp st.
Proof. induction l as [|c r IH]; intros st e; simpl; [reflexivity|]. rewrite IH. destruct (tracks c e); reflexivity. Qed.

Lemma qraise_all_steps : forall l st e, qsteps st (qraise_all st e l).
Proof.
  induction l as [|c r IH]; intros st e; simpl; [apply QStay|].
  destruct (tracks c e) eqn:T; [|apply IH].
  exact (QMore _ _ _ _ (QRaise st c e T) (IH _ e)).
Qed.

Lemma qraise_all_other : forall l st e c, ~ In c l -> qseen (qraise_all st e l) c e = qseen st c e.
Proof.
  induction l as [|c' r IH]; intros st e c Hn; simpl; [reflexivity|].
  rewrite IH by (intros H; apply Hn; right; exact H).
  destruct (tracks c' e); [|reflexivity]. unfold qraise. simpl. rewrite set2_cases.
  destruct (Nat.eqb c c') eqn:E; [apply Nat.eqb_eq in E; subst; exfalso; apply Hn; left; reflexivity|reflexivity].
Qed.

Lemma qraise_all_seen : forall l st e c, In c l -> tracks c e = true -> qseen (qraise_all st e l) c e = qcount st e.
Proof.
  induction l as [|c' r IH]; intros st e c Hin Ht; [destruct Hin|].
  simpl. destruct (in_dec Nat.eq_dec c r) as [Hr|Hr].
  - rewrite (IH _ e c Hr Ht). unfold qcount. destruct (tracks c' e); reflexivity.
  - destruct Hin as [->|Hin]; [|contradiction].
    rewrite (qraise_all_other r _ e c Hr), Ht. unfold qraise. simpl. rewrite set2_cases, !Nat.eqb_refl. reflexivity.
Qed.

Theorem q_no_deadlock : forall engs, (forall c e, tracks c e = true -> In c engs) ->
  (forall c, (1 <= depth c)%nat) -> earlier_only key tr W ->
  (forall c g k i f T, nth_error (groups c) g = Some k -> nth_error (W k) i = Some (f, T) -> tracks c f = true) ->
  forall st, qreachable st ->
  forall c, (exists k, nth_error (groups c) (issued (qp st) c) = Some k) \/ (pdone (qp st) c < issued (qp st) c)%nat ->
  exists st1 c' st2, qsteps st st1 /\ qstep st1 c' st2 /\ pstep key kc tr W depth (qp st1) c' (qp st2).
Proof.
  intros engs Heng Hd He Ht st R c Hw. pose proof (q_window st R) as I. pose proof I as [Rp [Hwin Hk]].
  destruct (pipeline_progress key kc tr W depth Hd He (qp st) Rp c Hw) as [c' [p' P]].
  inversion P as [p c1 k f T Hg HW HT | p c1 k Hg Hp Hdep Hself | p c1 Hlt]; subst.
  - pose proof (Ht c' _ k _ f T Hg HW) as Hf.
    assert (S1: qstep st c' (QState (PState (issued (qp st)) (pdone (qp st)) (bump (ppassed (qp st)) c' (S (ppassed (qp st) c'))))
                       (set2 (qseen st) c' f (qread st c' f)) (set2 (qknown st) c' f (Z.max (qknown st c' f) T)))).
    { apply (QPass st c' k f T Hg HW Hf). rewrite (qread_in_window st c' f I Hf). unfold qcount. apply Z.geb_le. exact HT. }
    exists st, c'. eexists. split; [apply QStay|]. split; [exact S1|]. simpl. exact P.
  - destruct (Z.le_gt_cases (Z.of_nat (S (issued (qp st) c'))) (Z.of_nat (pdone (qp st) c') + (qmod - 1))) as [Hroom|Hfull].
    + set (st1 := qraise_all st c' engs).
      assert (E1: qp st1 = qp st) by apply qraise_all_qp.
      assert (Hbp: forall c2, tracks c2 c' = true -> Z.of_nat (S (issued (qp st1) c')) <= qseen st1 c2 c' + (qmod - 1)).
      { intros c2 Hc2. rewrite E1. unfold st1. rewrite (qraise_all_seen engs st c' c2 (Heng c2 c' Hc2) Hc2).
        unfold qcount. exact Hroom. }
      rewrite <- E1 in Hg, Hp, Hdep, Hself.
      exists st1, c'. eexists. split; [apply qraise_all_steps|].
      split; [exact (QIssue st1 c' k Hg Hp Hdep Hself Hbp)|]. simpl.
      rewrite E1 in *. exact P.
    + assert (Hm: 1 <= qmod - 1).
      { unfold qmod. assert (2 ^ 1 <= 2 ^ Z.of_nat B) by (apply Z.pow_le_mono_r; lia). lia. }
      assert (Hlt: (pdone (qp st) c' < issued (qp st) c')%nat) by lia.
      exists st, c'. eexists. split; [apply QStay|]. split; [exact (QComplete st c' Hlt)|]. simpl.
      exact (PComplete _ _ _ _ _ (qp st) c' Hlt).
  - exists st, c'. eexists. split; [apply QStay|]. split; [exact (QComplete st c' Hlt)|]. simpl. exact P.
Qed.

Variable ne : nat.
Variable nd : nat -> nat -> Z.
Hypothesis nd_ok : forall k xk f, nth_error tr k = Some xk -> f <> ieng key xk -> (f < ne)%nat ->
  nd k f = need key kc (firstn k tr) f (ikeys key xk).

(* Never late on B bits: a wait the validator accepts, on a counter its
   engine tracks, passes on its extended read once every earlier
   conflicting instance on that engine has completed. *)
Theorem q_check_not_late : check key tr W ne nd = true ->
  forall st c k xk f T, qreachable st -> tracks c f = true -> nth_error tr k = Some xk -> In (f, T) (W k) ->
  (forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x = f ->
     conflict key kc (ikeys key x) (ikeys key xk) = true -> pcompleted key tr (qp st) j) ->
  T <= qread st c f.
Proof.
  intros V st c k xk f T R Ht Hk Hin Hdone. rewrite (q_read_exact st c f R Ht). unfold qcount.
  exact (pipeline_not_late key kc tr W ne nd nd_ok V (qp st) k xk f T Hk Hin Hdone).
Qed.

End NarrowPipeline.

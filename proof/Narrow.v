(* Narrow.v: B-bit counters, read by extension, kept exact by back-pressure
   (docs/algorithm.md, section 7).

   A counter of B bits holds S_e mod 2^B. Engine c keeps seen c e, the
   count of S_e it last read, and reads the low bits raw by extending them
   from it: extend B (seen c e) raw = seen + (raw - seen) mod 2^B, the
   runtime's bfrt_counter_extend. extend_exact: the extension gives S_e
   exactly when seen c e <= S_e < seen c e + 2^B (the window).

   The narrow machine adds to Machine.v's state (done, passed), per engine
   c and counter e it tracks (tracks c e: the kernel's tracks table,
   ir_tracks), seen c e (rt->seen) and known c e (the generated code's
   guard, bf_known), and a blocked flag per engine. It runs the protocol of
   runtime/kernel.c (rt_read, rt_holder) and the oracle (transform/oracle.c:
   read_counters, hold, idle). Engine c, whose next instance is k:
   - NPass: its next wait `S_f >= T` extends S_f's low bits from seen c f
     and passes when the count is >= T; known c f rises to T.
   - NGuard: the wait passes without a decision, because T <= known c f
     (bf_wait's `t > known[engine]` test).
   - NBlock: c is running, and the count it reads as in NPass is below T;
     c blocks (it is now idle).
   - NOp: c raises what idle consumers (blocked or finished) have seen of
     S_c to S_c (rt_saw on their behalf: a blocked engine keeps reading)
     and starts its op, which makes S_c = n, when every consumer c' of c
     has seen at least n - (2^B - 1) (rt_holder's check; span = 2^B - 1,
     rt_counter_span). The op completes in the same step, as in Machine.v.
   - NHeld: c is running and some consumer fails that check; c is held,
     and blocks (a held engine is idle too).
   Every step may also read any of the counters c tracks (reads), and which
   idle consumers a producer raises is left open (raises): the code reads
   all of them at every op and at every wait's start, and raises the idle
   ones below the check; any choice is an execution of this machine.

   Theorems:
   - extend_exact: the extension is exact iff the count is in the window.
   - narrow_window: every reachable state keeps the window for every
     tracked pair, seen c e <= S_e < seen c e + 2^B; so read_exact: every
     read of a tracked counter gives the whole count, and
     wait_decision_exact: every wait decides on B bits as on whole counts.
   - narrow_refines: the machine's (done, passed) is always a state the
     unbounded machine reaches (no wait passes early); so narrow_soundness.
   - narrow_not_late: whatever step the unbounded machine can take, the
     narrow one can take too, unless it is an op that a running consumer
     other than its engine holds; holder_running: with the code's choices,
     a consumer that fails the check is running and has seen too little.
   - narrow_progress: a reachable state in which some engine has work
     left can take a step (no deadlock); stutter_bound: steps that change
     neither done nor passed (NBlock, NHeld) each make a running engine
     idle, so no execution takes more of them in a row than there are
     engines (no livelock).
   - narrow_terminates, narrow_finishes: every execution is finite (a pass
     or an op takes one from the work left, a block or a hold one from
     the running engines), and one that cannot go on has run everything. *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
From BF Require Import Model Machine.
Open Scope Z_scope.

(* bfrt_counter_extend: the count a counter whose low B bits read raw
   holds, given that it is at least last and less than 2^B past it. *)
Definition extend (B : nat) (last raw : Z) : Z := last + (raw - last) mod 2 ^ Z.of_nat B.

Theorem extend_exact : forall B last c,
  extend B last (c mod 2 ^ Z.of_nat B) = c <-> last <= c < last + 2 ^ Z.of_nat B.
Proof.
  intros B last c. unfold extend.
  assert (Hm: 0 < 2 ^ Z.of_nat B) by (apply Z.pow_pos_nonneg; lia).
  rewrite Zminus_mod_idemp_l.
  pose proof (Z.mod_pos_bound (c - last) _ Hm). split.
  - intros E. lia.
  - intros H'. rewrite Z.mod_small by lia. lia.
Qed.

Section Narrow.
Variable key : Type.
Variable kc : key -> key -> bool.
Variable tr : list (inst key).
Variable W : nat -> list (nat * Z).
Variable B : nat.
Variable tracks : nat -> nat -> bool.

Hypothesis B_pos : (1 <= B)%nat.
(* Every counter a stream waits on is one its engine tracks (ir_tracks). *)
Hypothesis waits_tracked : forall c g k i f T, nth_error (groups key tr c) g = Some k ->
  nth_error (W k) i = Some (f, T) -> tracks c f = true.

Notation groups := (groups key tr).

Definition modulus : Z := 2 ^ Z.of_nat B.
(* rt_counter_span: the most a counter may be past what a reader saw. *)
Definition span : Z := modulus - 1.

Record nstate := NState {
  ms : mstate;                 (* done (the counters) and passed, as in Machine.v *)
  seen : nat -> nat -> Z;      (* seen c e: the count of S_e c last read (rt->seen) *)
  known : nat -> nat -> Z;     (* known c e: the highest threshold c passed on e (bf_known) *)
  blocked : nat -> bool        (* in a wait it could not pass, or held *)
}.

Definition count (st : nstate) (e : nat) : Z := Z.of_nat (done (ms st) e).
(* What e's B-bit counter holds (rt_counter_raw). *)
Definition raw (st : nstate) (e : nat) : Z := count st e mod modulus.

Definition has_work (st : nstate) (c : nat) : bool :=
  match nth_error (groups c) (done (ms st) c) with Some _ => true | None => false end.
(* Blocked (in a wait or held) or finished: it reads the counters it
   tracks all along, so a producer may raise what it has seen. *)
Definition idle (st : nstate) (c : nat) : bool := blocked st c || negb (has_work st c).

Definition setb (b : nat -> bool) (c : nat) (v : bool) : nat -> bool :=
  fun e => if Nat.eqb e c then v else b e.

(* c reads some of the counters it tracks, each by extension (rt_read). *)
Definition reads (st : nstate) (c : nat) (s' : nat -> nat -> Z) :=
  forall c' e, s' c' e = seen st c' e \/
    (c' = c /\ tracks c e = true /\ s' c' e = extend B (seen st c' e) (raw st e)).

(* Producer e raises what some idle consumers have seen of it to S_e. *)
Definition raises (st : nstate) (s : nat -> nat -> Z) (e : nat) (s' : nat -> nat -> Z) :=
  forall c' e', s' c' e' = s c' e' \/
    (e' = e /\ tracks c' e = true /\ idle st c' = true /\ s' c' e' = count st e).

Definition setk (kn : nat -> nat -> Z) (c f : nat) (T : Z) : nat -> nat -> Z :=
  fun c' e => if Nat.eqb c' c && Nat.eqb e f then Z.max (kn c f) T else kn c' e.

(* c passes its wait on f for T, having seen s. *)
Definition pass (st : nstate) (c f : nat) (T : Z) (s : nat -> nat -> Z) : nstate :=
  NState (MState (done (ms st)) (bump (passed (ms st)) c (S (passed (ms st) c)))) s
    (setk (known st) c f T) (setb (blocked st) c false).

Inductive nstep : nstate -> nat -> nstate -> Prop :=
| NPass : forall st c k f T s1,
    nth_error (groups c) (done (ms st) c) = Some k ->
    nth_error (W k) (passed (ms st) c) = Some (f, T) ->
    reads st c s1 -> Z.geb (extend B (seen st c f) (raw st f)) T = true ->
    nstep st c (pass st c f T s1)
| NGuard : forall st c k f T s1,
    nth_error (groups c) (done (ms st) c) = Some k ->
    nth_error (W k) (passed (ms st) c) = Some (f, T) ->
    reads st c s1 -> T <= known st c f ->
    nstep st c (pass st c f T s1)
| NBlock : forall st c k f T s1,
    blocked st c = false ->
    nth_error (groups c) (done (ms st) c) = Some k ->
    nth_error (W k) (passed (ms st) c) = Some (f, T) ->
    reads st c s1 -> Z.geb (extend B (seen st c f) (raw st f)) T = false ->
    nstep st c (NState (ms st) s1 (known st) (setb (blocked st) c true))
| NOp : forall st c k s1 s2,
    nth_error (groups c) (done (ms st) c) = Some k ->
    passed (ms st) c = length (W k) ->
    reads st c s1 -> raises st s1 c s2 ->
    (forall c', tracks c' c = true -> count st c + 1 - span <= s2 c' c) ->
    nstep st c (NState (MState (bump (done (ms st)) c (S (done (ms st) c)))
                               (bump (passed (ms st)) c 0)) s2 (known st) (setb (blocked st) c false))
| NHeld : forall st c k s1 s2 c',
    blocked st c = false ->
    nth_error (groups c) (done (ms st) c) = Some k ->
    passed (ms st) c = length (W k) ->
    reads st c s1 -> raises st s1 c s2 ->
    tracks c' c = true -> s2 c' c < count st c + 1 - span ->
    nstep st c (NState (ms st) s2 (known st) (setb (blocked st) c true)).

Definition ninit := NState init (fun _ _ => 0) (fun _ _ => 0) (fun _ => false).

Inductive nreachable : nstate -> Prop :=
| NReachInit : nreachable ninit
| NReachStep : forall st c st', nreachable st -> nstep st c st' -> nreachable st'.

(* ---- The window. *)

Definition win (s : nat -> nat -> Z) (d : nat -> nat) :=
  forall c e, tracks c e = true -> s c e <= Z.of_nat (d e) < s c e + modulus.

Definition window (st : nstate) := win (seen st) (done (ms st)).

Lemma modulus_ge2 : 2 <= modulus.
Proof.
  unfold modulus. replace 2 with (2 ^ 1) by reflexivity.
  apply Z.pow_le_mono_r; lia.
Qed.

Lemma read_in_window : forall st c e, window st -> tracks c e = true ->
  extend B (seen st c e) (raw st e) = count st e.
Proof.
  intros st c e Hw Ht. unfold raw, count, modulus. apply extend_exact. exact (Hw c e Ht).
Qed.

Lemma reads_window : forall st c s1, window st -> reads st c s1 -> win s1 (done (ms st)).
Proof.
  intros st c s1 Hw Hr c' e Ht. destruct (Hr c' e) as [E | [-> [Ht' E]]].
  - rewrite E. exact (Hw c' e Ht).
  - rewrite E, read_in_window by assumption. unfold count. pose proof modulus_ge2. lia.
Qed.

Lemma raises_window : forall st s e s', win s (done (ms st)) -> raises st s e s' ->
  win s' (done (ms st)).
Proof.
  intros st s e s' Hw Hr c' e' Ht. destruct (Hr c' e') as [E | [-> [_ [_ E]]]].
  - rewrite E. exact (Hw c' e' Ht).
  - rewrite E. unfold count. pose proof modulus_ge2. lia.
Qed.

(* The guard is sound: c passed every threshold it knows. *)
Definition known_below (st : nstate) := forall c e, known st c e <= count st e.

Definition inv (st : nstate) := window st /\ known_below st.

Lemma setk_below : forall st c f T, known_below st -> T <= count st f ->
  forall c' e, setk (known st) c f T c' e <= count st e.
Proof.
  intros st c f T Hk HT c' e. unfold setk.
  destruct (Nat.eqb c' c) eqn:E1, (Nat.eqb e f) eqn:E2; simpl; try apply Hk.
  apply Nat.eqb_eq in E2. subst e. pose proof (Hk c f). lia.
Qed.

Lemma nstep_inv : forall st c st', inv st -> nstep st c st' -> inv st'.
Proof.
  intros st c st' [Hw Hk] Hs. destruct Hs; split; unfold window, known_below; simpl.
  - exact (reads_window _ _ _ Hw H1).
  - apply (setk_below st); [exact Hk|]. apply Z.geb_le in H2.
    rewrite (read_in_window st c f Hw (waits_tracked c _ k _ f T H H0)) in H2. exact H2.
  - exact (reads_window _ _ _ Hw H1).
  - apply (setk_below st); [exact Hk|]. pose proof (Hk c f). lia.
  - exact (reads_window _ _ _ Hw H2).
  - exact Hk.
  - pose proof (raises_window _ _ _ _ (reads_window _ _ _ Hw H1) H2) as W2.
    intros c' e Ht. unfold bump. destruct (Nat.eqb e c) eqn:E.
    + apply Nat.eqb_eq in E. subst e. specialize (W2 c' c Ht). specialize (H3 c' Ht).
      unfold count, span in *. lia.
    + exact (W2 c' e Ht).
  - intros c' e. pose proof (Hk c' e). unfold count in *. simpl. unfold bump.
    destruct (Nat.eqb e c) eqn:E; [apply Nat.eqb_eq in E; subst e|]; lia.
  - exact (raises_window _ _ _ _ (reads_window _ _ _ Hw H2) H3).
  - exact Hk.
Qed.

Lemma narrow_inv : forall st, nreachable st -> inv st.
Proof.
  induction 1.
  - split; intros c e; simpl; [intros _; pose proof modulus_ge2|unfold count]; simpl; lia.
  - exact (nstep_inv _ _ _ IHnreachable H0).
Qed.

(* The window: in every reachable state, every engine has seen every
   counter it tracks less than 2^B ago. *)
Theorem narrow_window : forall st, nreachable st -> window st.
Proof. intros st R. exact (proj1 (narrow_inv st R)). Qed.

(* Every read of a tracked counter, in every reachable state, is exact. *)
Theorem read_exact : forall st c e, nreachable st -> tracks c e = true ->
  extend B (seen st c e) (raw st e) = count st e.
Proof. intros st c e R Ht. exact (read_in_window st c e (narrow_window st R) Ht). Qed.

(* So every wait decides on B bits as it would on whole counts: it passes
   (NPass) exactly when S_f >= T, and blocks (NBlock) exactly when not. *)
Theorem wait_decision_exact : forall st c k f T, nreachable st ->
  nth_error (groups c) (done (ms st) c) = Some k -> nth_error (W k) (passed (ms st) c) = Some (f, T) ->
  Z.geb (extend B (seen st c f) (raw st f)) T = Z.geb (count st f) T.
Proof. intros st c k f T R Hg HW. rewrite (read_exact st c f R (waits_tracked c _ k _ f T Hg HW)). reflexivity. Qed.

(* ---- The narrow machine refines the unbounded one. *)

Lemma nstep_refines : forall st c st', inv st -> nstep st c st' ->
  step key tr W (ms st) c (ms st') \/ ms st' = ms st.
Proof.
  intros st c st' [Hw Hk] Hs. destruct Hs.
  - left. eapply StepWait; try eassumption.
    change (Z.of_nat (done (ms st) f)) with (count st f).
    rewrite <- (read_in_window st c f Hw (waits_tracked c _ k _ f T H H0)). exact H2.
  - left. eapply StepWait; try eassumption. apply Z.geb_le.
    pose proof (Hk c f). unfold count in *. lia.
  - right. reflexivity.
  - left. eapply StepOp; eassumption.
  - right. reflexivity.
Qed.

Theorem narrow_refines : forall st, nreachable st -> reachable key tr W (ms st).
Proof.
  induction 1; [constructor|].
  destruct (nstep_refines st c st' (narrow_inv st H) H0) as [S | E].
  - exact (ReachStep key tr W _ _ _ IHnreachable S).
  - rewrite E. exact IHnreachable.
Qed.

(* Soundness of the narrow machine, for any waits that cover the needs:
   when c is ready to start the op of instance k, every earlier
   conflicting instance of another engine has completed. *)
Theorem narrow_soundness : covers key kc tr W ->
  forall st, nreachable st ->
  forall c k xk, nth_error (groups c) (done (ms st) c) = Some k -> passed (ms st) c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr (ms st) j.
Proof.
  intros Hcov st R c k xk Hg Hp.
  apply (soundness_general key kc tr W Hcov (ms st) c _ (narrow_refines st R) (StepOp key tr W (ms st) c k Hg Hp) k xk Hg Hp).
Qed.

(* ---- Never late, except a held op. *)

(* c reads every counter it tracks (rt_read_counters). *)
Definition read_all (st : nstate) (c : nat) : nat -> nat -> Z :=
  fun c' e => if Nat.eqb c' c && tracks c e then extend B (seen st c' e) (raw st e) else seen st c' e.

(* Producer e raises every idle consumer (rt_holder). *)
Definition raise_all (st : nstate) (s : nat -> nat -> Z) (e : nat) : nat -> nat -> Z :=
  fun c' e' => if Nat.eqb e' e && tracks c' e && idle st c' then count st e else s c' e'.

Lemma read_all_reads : forall st c, reads st c (read_all st c).
Proof.
  intros st c c' e. unfold read_all. destruct (Nat.eqb c' c) eqn:E1, (tracks c e) eqn:E2; simpl; auto.
  right. apply Nat.eqb_eq in E1. auto.
Qed.

Lemma raise_all_raises : forall st s e, raises st s e (raise_all st s e).
Proof.
  intros st s e c' e'. unfold raise_all.
  destruct (Nat.eqb e' e) eqn:E1, (tracks c' e) eqn:E2, (idle st c') eqn:E3; simpl; auto.
  right. apply Nat.eqb_eq in E1. auto.
Qed.

(* With the code's choices (c reads every counter it tracks, and raises
   every idle consumer), a consumer that still fails c's hold check is
   running, is not c, and has seen too little of S_c: the holder is always
   a running engine, which reads S_c at its next step (running_steps). *)
Theorem holder_running : forall st c c', nreachable st -> tracks c' c = true ->
  raise_all st (read_all st c) c c' c < count st c + 1 - span ->
  idle st c' = false /\ c' <> c /\ seen st c' c < count st c + 1 - span.
Proof.
  intros st c c' R Ht Hlt. pose proof (narrow_window st R) as Hw. pose proof modulus_ge2.
  unfold raise_all in Hlt. rewrite Nat.eqb_refl, Ht in Hlt. simpl in Hlt.
  destruct (idle st c') eqn:I; [unfold span in Hlt; lia|].
  unfold read_all in Hlt. destruct (Nat.eq_dec c' c) as [->|Hne].
  - rewrite Nat.eqb_refl, Ht in Hlt. simpl in Hlt. rewrite read_in_window in Hlt by assumption.
    unfold span in Hlt. lia.
  - apply Nat.eqb_neq in Hne as Hne'. rewrite Hne' in Hlt. simpl in Hlt. auto.
Qed.

(* Whatever step the unbounded machine can take, the narrow machine takes
   the same step, unless it is an op and a running consumer other than c
   has seen too little of c: a wait never passes late. *)
Theorem narrow_not_late : forall st c m', nreachable st -> step key tr W (ms st) c m' ->
  (forall c', tracks c' c = true -> idle st c' = false -> c' <> c ->
     count st c + 1 - span <= seen st c' c) ->
  exists st', nstep st c st' /\ ms st' = m'.
Proof.
  intros st c m' R Hs Hc. pose proof (narrow_window st R) as Hw.
  inversion Hs as [st0 c0 k f T Hg HW Hge | st0 c0 k Hg Hp]; subst.
  - exists (pass st c f T (read_all st c)). split; [|reflexivity].
    pose proof (waits_tracked c _ k _ f T Hg HW) as Ht.
    apply (NPass st c k f T); try assumption.
    + apply read_all_reads.
    + rewrite read_in_window by assumption. exact Hge.
  - exists (NState (MState (bump (done (ms st)) c (S (done (ms st) c))) (bump (passed (ms st)) c 0))
      (raise_all st (read_all st c) c) (known st) (setb (blocked st) c false)).
    split; [|reflexivity]. apply (NOp st c k (read_all st c)); try assumption.
    + apply read_all_reads.
    + apply raise_all_raises.
    + intros c' Ht. destruct (Z_lt_le_dec (raise_all st (read_all st c) c c' c) (count st c + 1 - span)) as [Hlt|]; [|assumption].
      destruct (holder_running st c c' R Ht Hlt) as [I [Hne Hsn]]. specialize (Hc c' Ht I Hne). lia.
Qed.

(* ---- Progress. *)

Section Progress.
Variable engs : list nat.
Hypothesis engines_known : forall x, In x tr -> In (ieng key x) engs.
Hypothesis tracks_known : forall c e, tracks c e = true -> In c engs.
Hypothesis early : earlier_only key tr W.

Lemma work_known : forall st c, has_work st c = true -> In c engs.
Proof.
  intros st c H. unfold has_work in H. destruct (nth_error (groups c) (done (ms st) c)) as [k|] eqn:E; [|discriminate].
  destruct (groups_in key tr c _ k E) as [Hk Heng].
  destruct (nth_error tr k) as [x|] eqn:Ex; [|apply nth_error_None in Ex; lia].
  rewrite (eng_at_nth key tr k x Ex) in Heng. subst c. apply engines_known. apply nth_error_In with k. exact Ex.
Qed.

Lemma forallb_false_exists : forall {A} (f : A -> bool) l, forallb f l = false ->
  exists x, In x l /\ f x = false.
Proof.
  induction l as [|a l IH]; simpl; [discriminate|]. intros H.
  destruct (f a) eqn:E; simpl in H.
  - destruct (IH H) as [x [Hx Hf]]. exists x. auto.
  - exists a. auto.
Qed.

(* A running engine can always take a step: pass, block, start its op,
   or be held by a running consumer. *)
Lemma running_steps : forall st c, nreachable st -> idle st c = false -> exists st', nstep st c st'.
Proof.
  intros st c R I. pose proof (narrow_window st R) as Hw.
  unfold idle in I. apply orb_false_iff in I. destruct I as [Hb Hwk].
  unfold has_work in Hwk. destruct (nth_error (groups c) (done (ms st) c)) as [k|] eqn:Hg; [|discriminate].
  destruct (nth_error (W k) (passed (ms st) c)) as [[f T]|] eqn:HW.
  - pose proof (waits_tracked c _ k _ f T Hg HW) as Ht.
    destruct (Z.geb (extend B (seen st c f) (raw st f)) T) eqn:Hge.
    + eexists. apply (NPass st c k f T); try eassumption. apply read_all_reads.
    + eexists. apply (NBlock st c k f T); try eassumption. apply read_all_reads.
  - assert (Hp: passed (ms st) c = length (W k)).
    { pose proof (reachable_holds key tr W (ms st) (narrow_refines st R) c (done (ms st) c) k Hg) as [_ H].
      destruct (H eq_refl) as [Hl _]. apply nth_error_None in HW. lia. }
    set (s2 := raise_all st (read_all st c) c).
    destruct (forallb (fun c' => negb (tracks c' c) || (count st c + 1 - span <=? s2 c' c)) engs) eqn:F.
    + eexists. apply (NOp st c k (read_all st c) s2); try assumption;
        [apply read_all_reads | apply raise_all_raises|].
      intros c' Ht. rewrite forallb_forall in F. specialize (F c' (tracks_known c' c Ht)).
      rewrite Ht in F. simpl in F. apply Z.leb_le. exact F.
    + destruct (forallb_false_exists _ _ F) as [c' [_ Hf]].
      apply orb_false_iff in Hf. destruct Hf as [Ht Hlt]. apply negb_false_iff in Ht. apply Z.leb_gt in Hlt.
      eexists. apply (NHeld st c k (read_all st c) s2 c'); try assumption;
        [apply read_all_reads | apply raise_all_raises].
Qed.

(* No deadlock: a reachable state in which some engine has work left can
   take a step. If some engine is running, it can. If every engine is
   idle, no engine holds another, and the unbounded machine's step
   (progress_general) is a step of the narrow machine. *)
Theorem narrow_progress : forall st, nreachable st ->
  forall c k, nth_error (groups c) (done (ms st) c) = Some k -> exists c' st', nstep st c' st'.
Proof.
  intros st R c k Hg.
  destruct (existsb (fun c' => negb (idle st c')) engs) eqn:E.
  - apply existsb_exists in E. destruct E as [c' [_ I]]. apply negb_true_iff in I.
    exists c'. exact (running_steps st c' R I).
  - destruct (progress_general key tr W early (ms st) (narrow_refines st R) c k Hg) as [c' [m' Hs]].
    destruct (narrow_not_late st c' m' R Hs) as [st' [Hn _]].
    + intros c'' Ht I _. exfalso. pose proof (tracks_known c'' c' Ht) as Hin.
      assert (existsb (fun c0 => negb (idle st c0)) engs = true) by (apply existsb_exists; exists c''; rewrite I; auto).
      congruence.
    + exists c', st'. exact Hn.
Qed.

(* ---- No livelock: steps that change neither done nor passed. *)

Definition running_count (st : nstate) : nat := length (filter (fun c => negb (idle st c)) engs).

Lemma nstep_stutter : forall st c st', nstep st c st' -> ms st' = ms st ->
  blocked st c = false /\ has_work st c = true /\ ms st' = ms st /\ blocked st' = setb (blocked st) c true.
Proof.
  intros st c st' Hs E. destruct Hs; simpl in *.
  - exfalso. pose proof (f_equal (fun m => passed m c) E) as E'. simpl in E'.
    unfold bump in E'. rewrite Nat.eqb_refl in E'. lia.
  - exfalso. pose proof (f_equal (fun m => passed m c) E) as E'. simpl in E'.
    unfold bump in E'. rewrite Nat.eqb_refl in E'. lia.
  - unfold has_work. rewrite H0. auto.
  - exfalso. pose proof (f_equal (fun m => done m c) E) as E'. simpl in E'.
    unfold bump in E'. rewrite Nat.eqb_refl in E'. lia.
  - unfold has_work. rewrite H0. auto.
Qed.

Lemma filter_le : forall (f g : nat -> bool) l, (forall x, g x = true -> f x = true) ->
  (length (filter g l) <= length (filter f l))%nat.
Proof.
  intros f g l H. induction l as [|a l IH]; simpl; [lia|].
  destruct (g a) eqn:Eg; [rewrite (H a Eg)|destruct (f a)]; simpl; lia.
Qed.

Lemma filter_lt : forall (f g : nat -> bool) c l, (forall x, g x = true -> f x = true) ->
  g c = false -> f c = true -> In c l -> (length (filter g l) < length (filter f l))%nat.
Proof.
  intros f g c l H Hg Hf. induction l as [|a l IH]; simpl; [tauto|]. intros [->|Hin].
  - rewrite Hg, Hf. simpl. pose proof (filter_le f g l H). lia.
  - specialize (IH Hin). destruct (g a) eqn:Eg; [rewrite (H a Eg)|destruct (f a)]; simpl; lia.
Qed.

Lemma stutter_decreases : forall st c st', nstep st c st' -> ms st' = ms st ->
  (running_count st' < running_count st)%nat.
Proof.
  intros st c st' Hs E. destruct (nstep_stutter st c st' Hs E) as [Hb [Hwk [Ems Eb]]].
  unfold running_count. apply filter_lt with c.
  - intros x. unfold idle, has_work. rewrite Ems, Eb. unfold setb.
    destruct (Nat.eqb x c); simpl; [discriminate|auto].
  - unfold idle. rewrite Eb. unfold setb. rewrite Nat.eqb_refl. reflexivity.
  - unfold idle. rewrite Hb, Hwk. reflexivity.
  - exact (work_known st c Hwk).
Qed.

(* n steps in a row that change neither done nor passed. *)
Inductive stutters : nat -> nstate -> nstate -> Prop :=
| StutterNone : forall st, stutters 0 st st
| StutterStep : forall n st c st' st'', nstep st c st' -> ms st' = ms st -> stutters n st' st'' ->
    stutters (S n) st st''.

Lemma running_le : forall st, (running_count st <= length engs)%nat.
Proof.
  intros st. unfold running_count.
  pose proof (filter_le (fun _ => true) (fun c => negb (idle st c)) engs ltac:(auto)) as L.
  assert (T: forall l, length (filter (fun _ : nat => true) l) = length l)
    by (induction l as [|a l IH]; simpl; auto).
  rewrite T in L. exact L.
Qed.

Theorem stutter_bound : forall n st st', stutters n st st' -> (n <= length engs)%nat.
Proof.
  assert (forall n st st', stutters n st st' -> (n <= running_count st)%nat) as H.
  { induction 1; [lia|]. pose proof (stutter_decreases st c st' H H0). lia. }
  intros n st st' Hs. pose proof (H n st st' Hs). pose proof (running_le st). lia.
Qed.

(* ---- Every execution finishes. *)

(* The waits and ops c has left: its groups from done c on, less the
   waits of the current one it passed. *)
Fixpoint wsum (l : list nat) : nat :=
  match l with [] => 0%nat | k :: l => (length (W k) + 1 + wsum l)%nat end.

Definition rem (st : nstate) (c : nat) : nat :=
  (wsum (skipn (done (ms st) c) (groups c)) - passed (ms st) c)%nat.

Fixpoint total (f : nat -> nat) (l : list nat) : nat :=
  match l with [] => 0%nat | c :: l => (f c + total f l)%nat end.

Definition measure (st : nstate) : nat :=
  (total (rem st) engs * S (length engs) + running_count st)%nat.

Lemma skipn_nth : forall (l : list nat) d k, nth_error l d = Some k -> skipn d l = k :: skipn (S d) l.
Proof.
  induction l as [|a l IH]; intros [|d] k H; simpl in *; try discriminate.
  - injection H as <-. reflexivity.
  - apply IH. exact H.
Qed.

Lemma total_le : forall f g l, (forall x, (g x <= f x)%nat) -> (total g l <= total f l)%nat.
Proof. intros f g l H. induction l as [|a l IH]; simpl; [lia|]. specialize (H a). lia. Qed.

Lemma total_lt : forall f g c l, (forall x, x <> c -> g x = f x) -> (g c < f c)%nat -> In c l ->
  (total g l < total f l)%nat.
Proof.
  intros f g c l H Hc. induction l as [|a l IH]; simpl; [tauto|]. intros [->|Hin].
  - assert (forall x, (g x <= f x)%nat).
    { intros x. destruct (Nat.eq_dec x c) as [->|Hne]; [lia|]. rewrite (H x Hne). lia. }
    pose proof (total_le f g l H0). lia.
  - specialize (IH Hin). destruct (Nat.eq_dec a c) as [->|Hne]; [lia|]. rewrite (H a Hne). lia.
Qed.

Lemma bump_other : forall (g : nat -> nat) c z e, e <> c -> bump g c z e = g e.
Proof. intros g c z e H. unfold bump. apply Nat.eqb_neq in H. rewrite H. reflexivity. Qed.

Lemma bump_same : forall (g : nat -> nat) c z, bump g c z c = z.
Proof. intros g c z. unfold bump. rewrite Nat.eqb_refl. reflexivity. Qed.

(* A pass or an op takes one from the work its engine has left; a block
   or a hold changes neither done nor passed. *)
Lemma step_work : forall st c st', nstep st c st' ->
  ms st' = ms st \/ (total (rem st') engs < total (rem st) engs)%nat.
Proof.
  intros st c st' Hs.
  destruct Hs as [st c k f T s1 Hg HW _ _ | st c k f T s1 Hg HW _ _ | | st c k s1 s2 Hg Hp _ _ _ |];
    [right..|left; reflexivity|right|left; reflexivity];
    (assert (Hin: In c engs) by (apply (work_known st c); unfold has_work; rewrite Hg; reflexivity));
    apply total_lt with c; try exact Hin.
  - intros e He. unfold rem. simpl. rewrite bump_other by exact He. reflexivity.
  - unfold rem. simpl. rewrite bump_same, (skipn_nth _ _ _ Hg). simpl.
    assert (passed (ms st) c < length (W k))%nat by (apply nth_error_Some; congruence). lia.
  - intros e He. unfold rem. simpl. rewrite bump_other by exact He. reflexivity.
  - unfold rem. simpl. rewrite bump_same, (skipn_nth _ _ _ Hg). simpl.
    assert (passed (ms st) c < length (W k))%nat by (apply nth_error_Some; congruence). lia.
  - intros e He. unfold rem. simpl. rewrite !bump_other by exact He. reflexivity.
  - unfold rem. simpl. rewrite !bump_same, (skipn_nth _ _ _ Hg). simpl. rewrite Hp. lia.
Qed.

Lemma measure_decreases : forall st c st', nstep st c st' -> (measure st' < measure st)%nat.
Proof.
  intros st c st' Hs. unfold measure.
  destruct (step_work st c st' Hs) as [E|D].
  - pose proof (stutter_decreases st c st' Hs E) as D.
    assert (total (rem st') engs = total (rem st) engs) as T by (unfold rem; rewrite E; reflexivity).
    lia.
  - pose proof (running_le st').
    set (L := length engs) in *. set (a := total (rem st') engs) in *. set (b := total (rem st) engs) in *.
    assert (S a * S L <= b * S L)%nat by (apply Nat.mul_le_mono_r; lia).
    simpl in H0. lia.
Qed.

(* n steps of the narrow machine. *)
Inductive nsteps : nat -> nstate -> nstate -> Prop :=
| NStepsNone : forall st, nsteps 0 st st
| NStepsStep : forall n st c st' st'', nstep st c st' -> nsteps n st' st'' -> nsteps (S n) st st''.

(* Every execution finishes: none is longer than the measure of its first
   state, and one that cannot go on has run every instance. *)
Theorem narrow_terminates : forall n st st', nsteps n st st' -> (n <= measure st)%nat.
Proof.
  induction 1; [lia|]. pose proof (measure_decreases st c st' H). lia.
Qed.

Theorem narrow_finishes : forall st, nreachable st -> (forall c st', ~ nstep st c st') ->
  forall c, nth_error (groups c) (done (ms st) c) = None.
Proof.
  intros st R Hstuck c. destruct (nth_error (groups c) (done (ms st) c)) as [k|] eqn:Hg; [|reflexivity].
  exfalso. destruct (narrow_progress st R c k Hg) as [c' [st' Hs]]. exact (Hstuck c' st' Hs).
Qed.

End Progress.
End Narrow.

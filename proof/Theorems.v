(* Theorems.v: the main theorems, for the transform's thresholds.

   The machine of Machine.v runs the trace of kernel prog under parameters
   p, with the waits the transform computes: before instance k, one wait
   per other engine f, `wait S_f >= T` with T the transform's threshold
   (Transform.thresholds; Transform.exactness says T = need_f(k)). A
   threshold of 0 never waits; keeping it in the model changes nothing. *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
From BF Require Import Model Transform Machine Narrow.
Open Scope Z_scope.

Section Theorems.
Variable acc key : Type.
Variable eval_acc : penv -> env -> acc -> key.
Variable kc : key -> key -> bool.
Variable engs : list nat.
Variable key_eqb : key -> key -> bool.
Hypothesis key_eqb_eq : forall a b, key_eqb a b = true -> a = b.
Variable p : penv.
Variable prog : block acc.

Notation tr := (trace acc key eval_acc p prog).
Notation need := (need key kc).

(* The waits of instance k, as the transform emits them. *)
Definition waits (k : nat) : list (nat * Z) :=
  match nth_error (thresholds acc key eval_acc kc engs key_eqb p prog) k with
  | Some (_, ws) => ws
  | None => []
  end.

(* Every instance runs on an engine of the machine. *)
Hypothesis engines_known : forall x, In x tr -> In (ieng key x) engs.

Lemma waits_need : forall k xk, nth_error tr k = Some xk ->
  waits k = map (fun f => (f, need (firstn k tr) f (ikeys key xk))) (others engs (ieng key xk)).
Proof.
  intros k xk H. unfold waits. rewrite (exactness_nth acc key eval_acc kc engs key_eqb key_eqb_eq p prog k xk H).
  reflexivity.
Qed.





(* Soundness, for any waits that imply each need of the transform. *)
Lemma covers_from_need : forall W,
  (forall c g k xk f, nth_error (groups key tr c) g = Some k -> nth_error tr k = Some xk ->
     In f (others engs (ieng key xk)) -> implied key tr W c g f (need (firstn k tr) f (ikeys key xk))) ->
  covers key kc tr W.
Proof.
  intros W H c g k xk j x Hg Hk Hj Hx Hne Hc.
  destruct (groups_in key tr c g k Hg) as [_ Heng]. rewrite (eng_at_nth key tr k xk Hk) in Heng.
  apply (implied_weaken key tr W) with (need (firstn k tr) (ieng key x) (ikeys key xk)).
  - apply (H c g k xk). exact Hg. exact Hk.
    unfold others. apply filter_In. split.
    + apply engines_known. apply nth_error_In with j. exact Hx.
    + subst c. apply negb_true_iff, Nat.eqb_neq. exact Hne.
  - pose proof (need_ge key kc (ieng key x) (ikeys key xk) (firstn k tr) j x) as G.
    rewrite firstn_firstn, Nat.min_l in G by lia. apply G; [|reflexivity|exact Hc].
    rewrite nth_error_firstn_lt by exact Hj. exact Hx.
Qed.

(* Soundness: in every interleaving, when an instance k starts on engine c,
   every earlier instance j (in program order) on another engine that
   conflicts with it has completed. *)
Theorem soundness : forall st c st', reachable key tr waits st -> step key tr waits st c st' ->
  forall k xk, nth_error (groups key tr c) (done st c) = Some k -> passed st c = length (waits k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j.
Proof.
  apply soundness_general. apply covers_from_need.
  intros c g k xk f Hg Hk Hf. eapply ImpWait with (g' := g); [lia|exact Hg| |reflexivity].
  rewrite (waits_need k xk Hk). apply in_map_iff. exists f. auto.
Qed.

(* The transform's waits ask only for producers earlier in program order. *)
Lemma waits_earlier : earlier_only key tr waits.
Proof.
  intros k xk f T Hk Hin. rewrite (waits_need k xk Hk) in Hin.
  apply in_map_iff in Hin. destruct Hin as [f' [Heq _]]. injection Heq as <- <-.
  apply need_bounds.
Qed.

(* Progress: no interleaving deadlocks. A reachable state in which some
   engine still has an instruction to run can take a step. *)
Theorem progress : forall st, reachable key tr waits st ->
  forall c k, nth_error (groups key tr c) (done st c) = Some k ->
  exists c' st', step key tr waits st c' st'.
Proof. apply progress_general. exact waits_earlier. Qed.

(* Redundant-wait elimination: any other placement of waits W (the
   transform's with waits dropped) in which each of the transform's needs
   is still implied, by a wait of the same engine on the same counter with
   no smaller threshold (the run-time guard, the static drop) or through a
   wait on another engine whose own waits imply it (the transitive drop),
   is sound too. *)
Theorem redundant_wait_elimination : forall W,
  (forall c g k xk f, nth_error (groups key tr c) g = Some k -> nth_error tr k = Some xk ->
     In f (others engs (ieng key xk)) -> implied key tr W c g f (need (firstn k tr) f (ikeys key xk))) ->
  forall st c st', reachable key tr W st -> step key tr W st c st' ->
  forall k xk, nth_error (groups key tr c) (done st c) = Some k -> passed st c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr st j.
Proof. intros W H. apply soundness_general. apply covers_from_need. exact H. Qed.

(* Narrow counters (Narrow.v): B-bit counters, read by extension from what
   each engine last saw, with the producers' back-pressure. Take any waits
   W that imply the needs (the transform's, thinned by the guard and the
   drops) and a tracks table that covers every counter a stream waits on.
   Every reachable state of the narrow machine is one the unbounded
   machine reaches (each wait decides on the whole count: Narrow.read_exact),
   so it is sound. *)
Theorem window_soundness : forall W B tracks, (1 <= B)%nat ->
  (forall c g k i f T, nth_error (groups key tr c) g = Some k -> nth_error (W k) i = Some (f, T) ->
     tracks c f = true) ->
  (forall c g k xk f, nth_error (groups key tr c) g = Some k -> nth_error tr k = Some xk ->
     In f (others engs (ieng key xk)) -> implied key tr W c g f (need (firstn k tr) f (ikeys key xk))) ->
  forall st, nreachable key tr W B tracks st ->
  forall c k xk, nth_error (groups key tr c) (done (ms st) c) = Some k -> passed (ms st) c = length (W k) ->
  nth_error tr k = Some xk ->
  forall j x, (j < k)%nat -> nth_error tr j = Some x -> ieng key x <> c ->
  conflict key kc (ikeys key x) (ikeys key xk) = true -> completed key tr (ms st) j.
Proof.
  intros W B tracks HB Ht Himp. apply narrow_soundness; try assumption. apply covers_from_need. exact Himp.
Qed.

(* And with the transform's waits, when only the machine's engines track
   counters, no execution deadlocks: a held producer waits for a running
   consumer, which can always step (Narrow.narrow_progress; and
   Narrow.stutter_bound: no execution holds or blocks more than once per
   engine without a wait passing or an op running). *)
Theorem window_progress : forall B tracks, (1 <= B)%nat ->
  (forall c g k i f T, nth_error (groups key tr c) g = Some k -> nth_error (waits k) i = Some (f, T) ->
     tracks c f = true) ->
  (forall c e, tracks c e = true -> In c engs) ->
  forall st, nreachable key tr waits B tracks st ->
  forall c k, nth_error (groups key tr c) (done (ms st) c) = Some k ->
  exists c' st', nstep key tr waits B tracks st c' st'.
Proof.
  intros B tracks HB Ht Hk. exact (narrow_progress key tr waits B tracks HB Ht engs Hk waits_earlier).
Qed.

End Theorems.

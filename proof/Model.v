(* Model.v: the kernel language and its sequential semantics.

   A kernel is a structured program: instructions placed on engines, loops
   `for l in lo .. hi` whose bounds are evaluated once at entry (a range
   that is empty or negative runs no iteration), and conditionals
   `if (c) { t } else { f }`, c comparisons combined with && || !: a
   scope that runs zero or one time.
   Expressions are bfsync's: integers, parameters, loop variables, + - *,
   floor division and modulo (Coq's Z.div and Z.modulo round toward
   negative infinity, as docs/language.md specifies), max, which the
   transform's closed forms use, and min and max as kernels write them
   (a ragged view's extent is max(0, min(C, E - lo))).

   What an instruction touches is abstract: each access evaluates, in the
   current environment, to a key (for bfsync: a resource, a read or write
   flag and a rectangle), and `kc x y` decides whether producer access x
   conflicts with consumer access y. Nothing below assumes anything about
   kc: every theorem holds for every decidable conflict relation.

   The sequential semantics is the trace: the dynamic instances in program
   order. From it come the two definitions the theorems are about:
   - cnt e l, the number of e-instances in l. P_e(p), the position of
     program point p on engine e, is cnt e of the trace prefix before p.
   - need pre f ys: for a consumer whose accesses evaluate to ys, preceded
     by the trace prefix pre, the position after the latest f-instance of
     pre that conflicts with it (0 if none). *)
From Coq Require Import ZArith List Bool Arith Lia.
Import ListNotations.
Open Scope Z_scope.

Inductive expr :=
| EConst (z : Z)
| EParam (n : nat)
| EVar (l : nat)
| ENeg (a : expr)
| EAdd (a b : expr)
| ESub (a b : expr)
| EMul (a b : expr)
| EDiv (a b : expr)
| EMod (a b : expr)
| EMax (a b : expr)
| EMin (a b : expr)
| EElem (t : nat) (r c : expr).

Definition expr_eq_dec : forall a b : expr, {a = b} + {a <> b}.
Proof. decide equality; first [apply Z.eq_dec | apply Nat.eq_dec]. Defined.

(* Loop variables (by loop id), and parameters. *)
Definition env := nat -> Z.

(* What a kernel's expressions read besides loop variables: its parameters,
   and the values of its device integers, element (r, c) of i32 tensor t
   (an i32 widened to 64 bits). *)
Record penv := PEnv { par : nat -> Z; dev : nat -> Z -> Z -> Z }.

(* The kernel's integers are 64-bit two's complement: every result wraps
   into [-2^63, 2^63). *)
Definition wrap (z : Z) : Z := (z + 2 ^ 63) mod 2 ^ 64 - 2 ^ 63.

Fixpoint eval (p : penv) (v : env) (x : expr) : Z :=
  match x with
  | EConst z => z
  | EParam n => par p n
  | EVar l => v l
  | ENeg a => wrap (- eval p v a)
  | EAdd a b => wrap (eval p v a + eval p v b)
  | ESub a b => wrap (eval p v a - eval p v b)
  | EMul a b => wrap (eval p v a * eval p v b)
  | EDiv a b => wrap (eval p v a / eval p v b)
  | EMod a b => wrap (eval p v a mod eval p v b)
  | EMax a b => Z.max (eval p v a) (eval p v b)
  | EMin a b => Z.min (eval p v a) (eval p v b)
  | EElem t r c => dev p t (eval p v r) (eval p v c)
  end.

Fixpoint uses (l : nat) (x : expr) : bool :=
  match x with
  | EConst _ | EParam _ => false
  | EVar l' => Nat.eqb l l'
  | ENeg a => uses l a
  | EElem _ a b
  | EAdd a b | ESub a b | EMul a b | EDiv a b | EMod a b | EMax a b | EMin a b => uses l a || uses l b
  end.

Definition set (v : env) (l : nat) (z : Z) : env := fun n => if Nat.eqb n l then z else v n.

Lemma eval_set_unused : forall p v l z x, uses l x = false -> eval p (set v l z) x = eval p v x.
Proof.
  induction x; simpl; intros H; try rewrite orb_false_iff in H; try reflexivity;
    try (rewrite IHx1, IHx2 by apply H; reflexivity);
    try (rewrite IHx by assumption; reflexivity).
  unfold set. rewrite Nat.eqb_sym, H. reflexivity.
Qed.

Lemma of_to_nat : forall z, Z.of_nat (Z.to_nat z) = Z.max 0 z.
Proof.
  intros z. destruct (Z.le_gt_cases 0 z).
  - rewrite Z2Nat.id, Z.max_r; lia.
  - rewrite Z.max_l by lia. destruct z; try reflexivity; lia.
Qed.

Inductive cmp := CLt | CLe | CGt | CGe | CEq | CNe.

(* Conditions of `if`: comparisons combined with && || !. *)
Inductive cond :=
| CCmp (c : cmp) (a b : expr)
| CAnd (a b : cond)
| COr (a b : cond)
| CNot (a : cond).

Definition holds (c : cmp) (a b : Z) : bool :=
  match c with
  | CLt => a <? b | CLe => a <=? b | CGt => b <? a
  | CGe => b <=? a | CEq => a =? b | CNe => negb (a =? b)
  end.

Fixpoint evalc (p : penv) (v : env) (c : cond) : bool :=
  match c with
  | CCmp op a b => holds op (eval p v a) (eval p v b)
  | CAnd a b => evalc p v a && evalc p v b
  | COr a b => evalc p v a || evalc p v b
  | CNot a => negb (evalc p v a)
  end.

(* The values lo, lo + 1, ..., lo + n - 1 fed to f, results concatenated. *)
Fixpoint iter {A} (f : Z -> list A) (n : nat) (i : Z) : list A :=
  match n with
  | O => []
  | S n' => f i ++ iter f n' (i + 1)
  end.

Lemma nth_error_firstn_lt : forall {A} (l : list A) j k, (j < k)%nat ->
  nth_error (firstn k l) j = nth_error l j.
Proof.
  induction l; intros [|j] [|k] H; simpl; try reflexivity; try lia.
  apply IHl. lia.
Qed.

Section Lang.
Variable acc key : Type.
Variable eval_acc : penv -> env -> acc -> key.
Variable kc : key -> key -> bool.

Inductive stmt :=
| SInstr (id eng : nat) (accs : list acc)
| SFor (l : nat) (lo hi : expr) (body : block)
| SIf (c : cond) (t f : block)
with block :=
| BNil
| BCons (s : stmt) (rest : block).

Scheme stmt_ind2 := Induction for stmt Sort Prop
  with block_ind2 := Induction for block Sort Prop.
Combined Scheme stmt_block_ind from stmt_ind2, block_ind2.

Record inst := Inst { iid : nat; ieng : nat; ikeys : list key }.

Fixpoint trace_s (p : penv) (v : env) (s : stmt) : list inst :=
  match s with
  | SInstr id e accs => [Inst id e (map (eval_acc p v) accs)]
  | SFor l lo hi body =>
      let lo' := eval p v lo in
      iter (fun i => trace_b p (set v l i) body) (Z.to_nat (eval p v hi - lo')) lo'
  | SIf c t f => if evalc p v c then trace_b p v t else trace_b p v f
  end
with trace_b (p : penv) (v : env) (b : block) : list inst :=
  match b with
  | BNil => []
  | BCons s r => trace_s p v s ++ trace_b p v r
  end.

(* A kernel's trace: loop variables start unbound (read as 0). *)
Definition trace (p : penv) (prog : block) := trace_b p (fun _ => 0) prog.

Fixpoint cnt (e : nat) (l : list inst) : Z :=
  match l with
  | [] => 0
  | x :: r => (if Nat.eqb (ieng x) e then 1 else 0) + cnt e r
  end.

Lemma cnt_app : forall e l1 l2, cnt e (l1 ++ l2) = cnt e l1 + cnt e l2.
Proof. induction l1; simpl; intros; [|rewrite IHl1]; lia. Qed.

Lemma cnt_nonneg : forall e l, 0 <= cnt e l.
Proof. induction l; simpl; [|destruct (Nat.eqb _ _)]; lia. Qed.

(* Whether an instance with accesses xs conflicts with one with accesses ys. *)
Definition conflict (xs ys : list key) : bool := existsb (fun x => existsb (kc x) ys) xs.

Fixpoint need_aux (f : nat) (ys : list key) (pre : list inst) (c acc : Z) : Z :=
  match pre with
  | [] => acc
  | x :: r =>
      if Nat.eqb (ieng x) f
      then need_aux f ys r (c + 1) (if conflict (ikeys x) ys then c + 1 else acc)
      else need_aux f ys r c acc
  end.

(* need_f: the position (1-based, on f) of the latest f-instance of pre that
   conflicts with accesses ys, or 0. Positions grow along pre, so the last
   conflicting one met is the latest. *)
Definition need (pre : list inst) (f : nat) (ys : list key) : Z := need_aux f ys pre 0 0.

Lemma need_aux_snoc : forall f ys l x c a,
  need_aux f ys (l ++ [x]) c a =
  if Nat.eqb (ieng x) f
  then (if conflict (ikeys x) ys then c + cnt f l + 1 else need_aux f ys l c a)
  else need_aux f ys l c a.
Proof.
  induction l; simpl; intros.
  - destruct (Nat.eqb (ieng x) f); [destruct (conflict _ _); f_equal; lia | reflexivity].
  - destruct (Nat.eqb (ieng a) f) eqn:E; rewrite IHl;
      destruct (Nat.eqb (ieng x) f); try reflexivity;
      destruct (conflict (ikeys x) ys); try reflexivity; f_equal; lia.
Qed.

Lemma need_snoc : forall pre x f ys,
  need (pre ++ [x]) f ys =
  if Nat.eqb (ieng x) f
  then (if conflict (ikeys x) ys then cnt f pre + 1 else need pre f ys)
  else need pre f ys.
Proof. intros. unfold need. rewrite need_aux_snoc. reflexivity. Qed.

Lemma need_aux_bounds : forall f ys l c a,
  0 <= a <= c -> 0 <= need_aux f ys l c a <= c + cnt f l.
Proof.
  induction l as [|x l IHl]; simpl; intros c a0 H; [lia|].
  destruct (Nat.eqb (ieng x) f).
  - specialize (IHl (c + 1) (if conflict (ikeys x) ys then c + 1 else a0)).
    destruct (conflict _ _); lia.
  - specialize (IHl c a0 H). lia.
Qed.

Lemma need_bounds : forall pre f ys, 0 <= need pre f ys <= cnt f pre.
Proof. intros. unfold need. pose proof (need_aux_bounds f ys pre 0 0). lia. Qed.

Lemma need_aux_split : forall f ys l1 l2 c a,
  need_aux f ys (l1 ++ l2) c a = need_aux f ys l2 (c + cnt f l1) (need_aux f ys l1 c a).
Proof.
  induction l1; simpl; intros. - f_equal; lia.
  - destruct (Nat.eqb (ieng a) f); rewrite IHl1; f_equal; lia.
Qed.

Lemma need_aux_mono : forall f ys l c a, a <= c -> a <= need_aux f ys l c a.
Proof.
  induction l; simpl; intros c a0 H; [lia|].
  destruct (Nat.eqb (ieng a) f).
  - eapply Z.le_trans; [|apply IHl; destruct (conflict _ _); lia]. destruct (conflict _ _); lia.
  - apply IHl; lia.
Qed.

Lemma nth_error_split : forall {A} (l : list A) j x,
  nth_error l j = Some x -> l = firstn j l ++ [x] ++ skipn (S j) l.
Proof.
  induction l; intros [|j] x H; simpl in *; try discriminate.
  - injection H as ->. reflexivity.
  - f_equal. apply IHl. exact H.
Qed.

(* An earlier conflicting f-instance x (at index j of pre) bounds need from
   below: need >= P_f(after x). *)
Lemma need_ge : forall f ys pre j x,
  nth_error pre j = Some x -> ieng x = f -> conflict (ikeys x) ys = true ->
  cnt f (firstn j pre) + 1 <= need pre f ys.
Proof.
  intros f ys pre j x Hj He Hc.
  pose proof (nth_error_split pre j x Hj) as Hs.
  set (l1 := firstn j pre) in *. set (l2 := skipn (S j) pre) in *.
  rewrite Hs. unfold need.
  rewrite app_assoc, need_aux_split, need_aux_snoc, He, Nat.eqb_refl, Hc.
  apply need_aux_mono. rewrite cnt_app. simpl. rewrite He, Nat.eqb_refl. lia.
Qed.

(* need is the position after the latest conflicting instance: what a
   static scan (deps.c's closed and last-iteration thresholds) must
   establish to replace the tracked lookup by a compile-time position. *)
Lemma need_aux_quiet : forall f ys l c a,
  (forall y, In y l -> ieng y = f -> conflict (ikeys y) ys = false) -> need_aux f ys l c a = a.
Proof.
  induction l as [|y l IH]; simpl; intros c a H; [reflexivity|].
  destruct (Nat.eqb (ieng y) f) eqn:E.
  - apply Nat.eqb_eq in E. rewrite (H y (or_introl eq_refl) E). apply IH. auto.
  - apply IH. auto.
Qed.

Lemma need_latest : forall f ys pre j x,
  nth_error pre j = Some x -> ieng x = f -> conflict (ikeys x) ys = true ->
  (forall y, In y (skipn (S j) pre) -> ieng y = f -> conflict (ikeys y) ys = false) ->
  need pre f ys = cnt f (firstn j pre) + 1.
Proof.
  intros f ys pre j x Hj He Hc Hq.
  pose proof (nth_error_split pre j x Hj) as Hs.
  set (l1 := firstn j pre) in *. set (l2 := skipn (S j) pre) in *.
  rewrite Hs. unfold need.
  rewrite app_assoc, need_aux_split, need_aux_snoc, He, Nat.eqb_refl, Hc.
  apply need_aux_quiet. exact Hq.
Qed.

(* A positive need names its instance: the latest conflicting f-instance. *)
Lemma need_witness : forall pre f ys, 0 < need pre f ys ->
  exists j x, nth_error pre j = Some x /\ ieng x = f /\ conflict (ikeys x) ys = true /\
              need pre f ys = cnt f (firstn j pre) + 1.
Proof.
  intros pre f ys. induction pre as [|x pre IH] using rev_ind; intros H.
  - unfold need in H. simpl in H. lia.
  - rewrite need_snoc in *. destruct (Nat.eqb (ieng x) f) eqn:E.
    + destruct (conflict (ikeys x) ys) eqn:C.
      * exists (length pre), x. rewrite nth_error_app2, Nat.sub_diag by lia. simpl.
        rewrite firstn_app, Nat.sub_diag, firstn_all. simpl. rewrite app_nil_r.
        apply Nat.eqb_eq in E. auto.
      * destruct (IH H) as [j [y [Hj [Hf [Hc Hn]]]]].
        assert (j < length pre)%nat by (apply nth_error_Some; congruence).
        exists j, y. rewrite nth_error_app1 by lia. rewrite firstn_app.
        replace (j - length pre)%nat with 0%nat by lia. rewrite firstn_O, app_nil_r. auto.
    + destruct (IH H) as [j [y [Hj [Hf [Hc Hn]]]]].
      assert (j < length pre)%nat by (apply nth_error_Some; congruence).
      exists j, y. rewrite nth_error_app1 by lia. rewrite firstn_app.
      replace (j - length pre)%nat with 0%nat by lia. rewrite firstn_O, app_nil_r. auto.
Qed.

Lemma need_none : forall f ys pre,
  (forall y, In y pre -> ieng y = f -> conflict (ikeys y) ys = false) -> need pre f ys = 0.
Proof. intros. unfold need. apply need_aux_quiet. exact H. Qed.

End Lang.

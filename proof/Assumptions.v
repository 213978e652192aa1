(* Assumptions.v: `make proof` compiles this file and fails unless every
   main theorem is "Closed under the global context": no axiom, no
   admitted lemma, nothing beyond Coq's own logic. *)
From BF Require Import Model Transform Machine Theorems Validate Extract.

Print Assumptions Transform.exactness.
Print Assumptions Extract.bf_exactness.
Print Assumptions Theorems.soundness.
Print Assumptions Theorems.progress.
Print Assumptions Theorems.redundant_wait_elimination.
Print Assumptions Machine.wrap_ge_agrees.
Print Assumptions Theorems.window_agrees.
Print Assumptions Machine.stepped_lower.
Print Assumptions Theorems.window_soundness.
Print Assumptions Transform.count_correct.
Print Assumptions Model.need_latest.
Print Assumptions Validate.check_soundness.
Print Assumptions Validate.check_progress.
Print Assumptions Extract.bf_validated_soundness.
Print Assumptions Extract.bf_validated_progress.

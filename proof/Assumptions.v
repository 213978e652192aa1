(* Assumptions.v: `make proof` compiles this file and fails unless every
   main theorem is "Closed under the global context": no axiom, no
   admitted lemma, nothing beyond Coq's own logic. Every `Theorem` of the
   development must be listed here (check_assumptions.sh). *)
From BF Require Import Model Transform Machine Narrow Theorems Validate Pipeline Extract.

Print Assumptions Transform.exactness.
Print Assumptions Extract.bf_exactness.
Print Assumptions Extract.rect_conflict_iff.
Print Assumptions Machine.soundness_general.
Print Assumptions Machine.progress_general.
Print Assumptions Theorems.soundness.
Print Assumptions Theorems.progress.
Print Assumptions Theorems.redundant_wait_elimination.
Print Assumptions Transform.count_correct.
Print Assumptions Model.need_latest.
Print Assumptions Validate.validated_soundness.
Print Assumptions Validate.validated_progress.
Print Assumptions Validate.check_soundness.
Print Assumptions Validate.check_progress.
Print Assumptions Validate.check_exact.
Print Assumptions Extract.bf_validated_exact.
Print Assumptions Extract.bf_validated_narrow_exact.
Print Assumptions Extract.bf_validated_soundness.
Print Assumptions Extract.bf_validated_progress.
Print Assumptions Narrow.extend_exact.
Print Assumptions Narrow.narrow_window.
Print Assumptions Narrow.read_exact.
Print Assumptions Narrow.wait_decision_exact.
Print Assumptions Narrow.narrow_refines.
Print Assumptions Narrow.narrow_soundness.
Print Assumptions Narrow.narrow_not_late.
Print Assumptions Narrow.holder_running.
Print Assumptions Narrow.narrow_progress.
Print Assumptions Narrow.stutter_bound.
Print Assumptions Narrow.narrow_terminates.
Print Assumptions Narrow.narrow_finishes.
Print Assumptions Theorems.window_soundness.
Print Assumptions Theorems.window_progress.
Print Assumptions Extract.bf_validated_narrow_soundness.
Print Assumptions Extract.bf_validated_narrow_progress.
Print Assumptions Pipeline.pipeline_soundness.
Print Assumptions Pipeline.pipeline_progress.
Print Assumptions Pipeline.pipeline_check_soundness.
Print Assumptions Pipeline.pipeline_check_progress.
Print Assumptions Pipeline.pipeline_not_late.
Print Assumptions Pipeline.pipeline_narrow_unwrapped.
Print Assumptions Pipeline.q_window.
Print Assumptions Pipeline.q_read_exact.
Print Assumptions Pipeline.q_refines.
Print Assumptions Pipeline.q_soundness.
Print Assumptions Pipeline.q_progress_unwrapped.
Print Assumptions Pipeline.q_no_deadlock.
Print Assumptions Pipeline.q_check_not_late.

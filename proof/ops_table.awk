# ops_table.awk: runtime/ops.def -> opstable.ml, the proof checker's table
# of every op's operands (docs/proof.md, section 3). Each OP(ID, name,
# SIG_<dst>_<sources>, ...) line gives the op's operand kinds in order:
# T a tile, H an hbm tile, F a float immediate; operand 0 is the
# destination. What each operand does follows ops.def's own rule: the
# destination is written, every other tile or hbm operand is read, and an
# accumulating op (its ID ends in _ACC, as matmul_acc: "also reads its
# destination") reads its destination too. Run by the Makefile's proof
# rule, so a new entry in ops.def is in the table at the next build; an op
# the table lacks is an error of bfcheck, never a guess.
BEGIN { print "(* Generated from runtime/ops.def by proof/ops_table.awk: do not edit. *)"; print "let ops = [" }
/^OP\(/ {
  line = $0
  sub(/^OP\(/, "", line)
  split(line, f, ",")
  id = f[1]; gsub(/[ \t]/, "", id)
  sig = f[3]; gsub(/[ \t]/, "", sig)
  if (sig !~ /^SIG_[THF]+_[THF]*$/) { print "ops_table.awk: cannot read the signature of " id > "/dev/stderr"; bad = 1; exit 1 }
  sub(/^SIG_/, "", sig); gsub(/_/, "", sig)
  printf "  (\"%s\", \"%s\", %s);\n", id, sig, (id ~ /_ACC$/) ? "true" : "false"
  n++
}
END { if (bad) exit 1; if (n == 0) { print "ops_table.awk: no OP lines" > "/dev/stderr"; exit 1 } print "]" }

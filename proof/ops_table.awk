# ops_table.awk: runtime/ops.def -> opstable.ml, the proof checker's table
# of every op's operands (docs/proof.md, section 3). ops.def's SIG(ID,
# "KINDS", "ROLES") lines give each signature's operands in order, the
# destination first: kinds T a tile, H an hbm tile, F an immediate; roles w
# written, a read and written (an accumulator), r read, and -, o, f, n for
# immediates (a float, an ALU op, an activation function, negate). Each
# OP(ID, name, SIG_..., ...) line names its signature, and the table gives
# the op its kinds and roles: what each operand does is ops.def's
# declaration, never a rule of thumb here. Run by the Makefile's proof
# rule, so a new entry in ops.def is in the table at the next build; an op
# the table lacks is an error of bfcheck, never a guess.
BEGIN { print "(* Generated from runtime/ops.def by proof/ops_table.awk: do not edit. *)"; print "let ops = [" }
/^SIG\(/ {
  line = $0
  sub(/^SIG\(/, "", line)
  split(line, f, ",")
  id = f[1]; gsub(/[ \t]/, "", id)
  k = f[2]; gsub(/[ \t"]/, "", k)
  r = f[3]; sub(/\).*/, "", r); gsub(/[ \t"]/, "", r)
  if (k !~ /^[THF]+$/ || length(r) != length(k)) { print "ops_table.awk: cannot read signature " id > "/dev/stderr"; bad = 1; exit 1 }
  kinds[id] = k; roles[id] = r
}
/^OP\(/ {
  line = $0
  sub(/^OP\(/, "", line)
  split(line, f, ",")
  id = f[1]; gsub(/[ \t]/, "", id)
  sig = f[3]; gsub(/[ \t]/, "", sig)
  if (!(sig in kinds)) { print "ops_table.awk: " id " has signature " sig ", which no SIG line declares" > "/dev/stderr"; bad = 1; exit 1 }
  printf "  (\"%s\", \"%s\", \"%s\");\n", id, kinds[sig], roles[sig]
  n++
}
END { if (bad) exit 1; if (n == 0) { print "ops_table.awk: no OP lines" > "/dev/stderr"; exit 1 } print "]" }

# narrow.awk: trn1.target with `bits`-bit counters (awk -v bits=N), the
# test targets targets/trn1_cN.target; the Makefile runs it.
NR == 1 {
  print "# trn1_c" bits ".target: trn1 (trn1.target) with " bits "-bit counters, for the counter window's tests."
  print "# Derived from trn1.target by the Makefile (targets/narrow.awk): only name and"
  print "# counter_bits differ, and this header."
  next
}
NR <= 4 { next } # trn1's lines on being the default target
/^name = / { print "name = trn1_c" bits; next }
/^counter_bits = / {
  printf "counter_bits = %-14s # test target: trn1 with %d-bit counters, which wrap every %d increments\n", bits, bits, 2 ^ bits
  next
}
{ print }

// Package egress holds the rule that keeps a review run's secrets in the
// run (threat analysis MC5): a [Taint] keeps the secret-like values the
// run has seen ([Collect]), and a call may leave only when no view of its
// arguments ([Views]: decodings nested to [MaxDepth]), folded ([Fold]:
// Unicode look-alikes, case and separators gone), holds [Fragment]
// characters of one of them, counting the run's earlier calls
// ([Taint.Admit]). The package is pure: no I/O, no clock.
package egress

// Package egress holds the rule that keeps a review run's secrets in the
// run (threat analysis MC5): a [Taint] keeps the secret-like values the
// run has seen ([Collect]), and [Taint.Check] lets a call leave only when
// no view of its arguments ([Views]: decodings nested to [MaxDepth]),
// folded ([Fold]: look-alikes, case and separators gone), holds
// [Fragment] characters of one of them in pieces or chains (chain.go),
// counting the run's earlier calls. docs/threat-model.md (MC5) says why
// each length is what it is and what the check cannot see. The package is
// pure: no I/O, no clock.
package egress

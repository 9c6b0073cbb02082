// Package review holds the review: submitting and reading reviews, the
// run the worker calls (the gate, the per-run MCP context, the per-call
// pipeline of MC3 to MC5, the finder, verifier and summary steps), the
// debug prompt logs and the run's tracing spans.
package reviews

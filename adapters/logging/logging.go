// Package logging builds the service's zerolog logger: JSON lines on
// stderr, one level for the whole process.
package logging

import (
	"io"
	"time"

	"github.com/rs/zerolog"
)

// New returns a JSON logger writing to w at level, with RFC 3339 UTC
// timestamps in milliseconds.
func New(w io.Writer, level zerolog.Level) zerolog.Logger {
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(level).With().Timestamp().Str("service", "codelotse").Logger()
}

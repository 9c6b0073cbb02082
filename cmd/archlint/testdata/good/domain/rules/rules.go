package rules

import "time"

// Deadline takes the time as a value; the domain never reads the clock.
func Deadline(now time.Time, d time.Duration) time.Time { return now.Add(d) }

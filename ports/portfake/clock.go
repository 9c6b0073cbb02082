package portfake

import "time"

// Clock is a ports.Clock that tests move by hand.
type Clock struct{ At time.Time }

func (c *Clock) Now() time.Time { return c.At }

package review

import (
	"example.com/bad/app"
	"example.com/bad/app/registry"
	"example.com/bad/app/registry/sub"
)

var _ = app.Z
var _ = registry.Handler{}
var _ = sub.X

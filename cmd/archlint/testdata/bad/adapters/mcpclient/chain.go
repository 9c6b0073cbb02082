package mcpclient

type layer struct {
	name string
	step func()
}

func assemble(layers []layer) []layer { return layers }

// chain attaches the credential before the origin is checked.
func chain() []layer {
	step := func() {}
	return assemble([]layer{
		{"credential", step},
		{"origin", step},
		{"handshake", step},
		{"resumption", step},
		{"status", step},
		{"deadline", step},
		{"cap", step},
	})
}

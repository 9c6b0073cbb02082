package mcpclient

type layer struct {
	name string
	step func()
}

func assemble(layers []layer) []layer { return layers }

// chain assembles the layers in the argued order.
func chain() []layer {
	step := func() {}
	return assemble([]layer{
		{"origin", step},
		{"handshake", step},
		{"resumption", step},
		{"status", step},
		{"credential", step},
		{"deadline", step},
		{"cap", step},
	})
}

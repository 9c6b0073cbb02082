// Package llm groups the adapters of the model port,
// [github.com/codelotse/codelotse/ports.Model]:
//
//   - [github.com/codelotse/codelotse/adapters/llm/openai], a client of an
//     OpenAI-compatible chat-completions endpoint with tool calling
//     (QUAVON_LLM_PROVIDER=openai);
//   - [github.com/codelotse/codelotse/adapters/llm/scripted], the scripted
//     model: it replays a file of model turns for tests and the demo
//     (docs/walkthrough.md), and is no model at all (QUAVON_LLM_PROVIDER=scripted).
//
// The command wires one of them; the pipeline sees only the port.
// This package holds no code.
package llm

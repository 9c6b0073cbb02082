// Package scripted is the scripted model: a [ports.Model] that replays a
// file of model turns instead of asking a model, for tests and the
// demo of docs/walkthrough.md (QUAVON_LLM_PROVIDER=scripted). It
// is named the scripted model everywhere it appears, so nobody mistakes
// its output for a review.
//
// The script (QUAVON_LLM_SCRIPT) is one JSON object with a list of turns
// per step:
//
//	{"finder":   [{"toolCalls": [{"name": "mcp_wiki_search", "arguments": {"query": "cache"}}]},
//	              {"content": "{\"findings\": []}"}],
//	 "verifier": [{"content": "{\"verdicts\": []}"}],
//	 "summary":  [{"content": "One paragraph."}]}
//
// A turn is either tool calls or final content, never both. Every step
// takes its own turns in order, one per [Model.Complete] of that step; a
// step whose turns have run out, or that the script leaves out, answers
// empty content. Tool call ids are generated: call_<step>_<turn>_<call>,
// both numbers counted from 1.
//
// The turn counters live in the [Model], so they are per process and span
// every review the process runs: a server that runs two reviews against
// one script gives the second review the turns the first left over (most
// often none). An end-to-end test that runs several reviews either writes
// all their turns into one script, in order, or starts one process per
// review.
//
// With "perReview": true at the top of the script, every review gets the
// same turns instead: a request's turn is the number of assistant
// messages already in its conversation (the model turns that step has
// taken in this review), so any number of reviews, concurrent ones and
// retried attempts included, each replay the script from the start. The
// soak benchmark (docs/BENCHMARKS.md) runs 100 reviews this way.
//
// When a request log is set (QUAVON_LLM_SCRIPT_LOG), the scripted model
// appends one JSON line per request it receives, before it answers:
//
//	{"step": "finder", "tools": ["read_file", "mcp_wiki_search"], "messages": [{"role": "system", "content": "…"}]}
//
// tools are the names offered (an empty list when none), messages every
// message of the request with its role and content only (an assistant
// turn's tool calls and a tool message's call id are not logged). HTML
// characters are not escaped, so a test can search the file for the
// literal text that reached the model. Lines are written whole, one write
// each, with O_APPEND, so concurrent requests never interleave.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/codelotse/codelotse/ports"
)

// ErrScript: the script file cannot be read or is malformed. The error
// that wraps it names the file and, where it can, the step and turn.
var ErrScript = errors.New("scripted model: invalid script")

// ErrUnknownStep: a request named a step the scripted model does not know.
var ErrUnknownStep = errors.New("scripted model: unknown step")

// Model is the scripted model. Complete is safe for concurrent use.
type Model struct {
	turns     map[string][]ports.ModelResponse
	perReview bool
	logPath   string

	mu   sync.Mutex
	next map[string]int // the next turn of each step

	logMu sync.Mutex
}

var _ ports.Model = (*Model)(nil)

// script is the file's shape; unknown keys are refused at every level.
type script struct {
	PerReview bool   `json:"perReview"`
	Finder    []turn `json:"finder"`
	Verifier  []turn `json:"verifier"`
	Summary   []turn `json:"summary"`
}

type turn struct {
	ToolCalls []toolCall `json:"toolCalls"`
	Content   *string    `json:"content"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// New reads the script at scriptPath and returns the scripted model. A
// script that is not one JSON object of the three steps, has an unknown
// key, or has a turn that is neither tool calls nor content is refused
// with an error wrapping [ErrScript]. When logPath is not empty the
// request log is created (or opened for appending) right away, so a path
// that cannot be written fails here and not in the middle of a review.
func New(scriptPath, logPath string) (*Model, error) {
	raw, err := os.ReadFile(scriptPath)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrScript, scriptPath, err)
	}
	turns, perReview, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrScript, scriptPath, err)
	}
	m := &Model{turns: turns, perReview: perReview, logPath: logPath, next: map[string]int{}}
	if logPath != "" {
		f, err := openLog(logPath)
		if err != nil {
			return nil, fmt.Errorf("scripted model: request log: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("scripted model: request log: %w", err)
		}
	}
	return m, nil
}

func parse(raw []byte) (map[string][]ports.ModelResponse, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s *script
	if err := dec.Decode(&s); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			return nil, false, fmt.Errorf("%w (the steps are finder, verifier and summary, besides perReview; a turn has toolCalls or content; a tool call has name and arguments)", err)
		}
		return nil, false, err
	}
	if s == nil {
		return nil, false, errors.New("the script is null, want an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false, errors.New("data after the script object")
	}
	steps := map[string][]turn{
		ports.StepFinder:   s.Finder,
		ports.StepVerifier: s.Verifier,
		ports.StepSummary:  s.Summary,
	}
	out := make(map[string][]ports.ModelResponse, len(steps))
	for step, turns := range steps {
		for i, t := range turns {
			resp, err := t.response(step, i+1)
			if err != nil {
				return nil, false, fmt.Errorf("%s turn %d: %w", step, i+1, err)
			}
			out[step] = append(out[step], resp)
		}
	}
	return out, s.PerReview, nil
}

func (t turn) response(step string, n int) (ports.ModelResponse, error) {
	switch {
	case t.Content != nil && t.ToolCalls != nil:
		return ports.ModelResponse{}, errors.New(`a turn has either "toolCalls" or "content", not both`)
	case t.Content != nil:
		return ports.ModelResponse{Content: *t.Content}, nil
	case len(t.ToolCalls) == 0:
		return ports.ModelResponse{}, errors.New(`a turn needs a non-empty "toolCalls" or a "content"`)
	}
	var resp ports.ModelResponse
	for i, c := range t.ToolCalls {
		if c.Name == "" {
			return ports.ModelResponse{}, fmt.Errorf("tool call %d has no name", i+1)
		}
		// Any JSON value is allowed, so a script can hand the pipeline
		// arguments that its validation must refuse.
		args := json.RawMessage("{}")
		if len(c.Arguments) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, c.Arguments); err != nil {
				return ports.ModelResponse{}, fmt.Errorf("tool call %d: arguments: %w", i+1, err)
			}
			args = buf.Bytes()
		}
		resp.ToolCalls = append(resp.ToolCalls, ports.ModelToolCall{
			ID:        "call_" + step + "_" + strconv.Itoa(n) + "_" + strconv.Itoa(i+1),
			Name:      c.Name,
			Arguments: args,
		})
	}
	return resp, nil
}

// Complete logs the request (when a log is set) and answers the step's
// next turn (of the process, or of the review with perReview), or empty
// content once the step's turns have run out. A step other than finder,
// verifier and summary is an error wrapping [ErrUnknownStep]; it is
// logged all the same. A log that cannot be
// written is an error too, and the turn is not used up.
func (m *Model) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return ports.ModelResponse{}, err
	}
	if m.logPath != "" {
		if err := m.log(req); err != nil {
			return ports.ModelResponse{}, err
		}
	}
	switch req.Step {
	case ports.StepFinder, ports.StepVerifier, ports.StepSummary:
	default:
		return ports.ModelResponse{}, fmt.Errorf("%w %q", ErrUnknownStep, req.Step)
	}
	turns := m.turns[req.Step]
	if m.perReview {
		n := 0
		for _, msg := range req.Messages {
			if msg.Role == ports.RoleAssistant {
				n++
			}
		}
		if n >= len(turns) {
			return ports.ModelResponse{}, nil
		}
		// Turns are shared by every review: hand out a copy whose tool
		// calls the caller may keep or change.
		resp := turns[n]
		resp.ToolCalls = slices.Clone(resp.ToolCalls)
		return resp, nil
	}
	m.mu.Lock()
	n := m.next[req.Step]
	if n < len(turns) {
		m.next[req.Step] = n + 1
	}
	m.mu.Unlock()
	if n >= len(turns) {
		return ports.ModelResponse{}, nil
	}
	// Each turn is handed out once, so the caller may keep it as it is.
	return turns[n], nil
}

// logLine is one line of the request log (see the package doc).
type logLine struct {
	Step     string       `json:"step"`
	Tools    []string     `json:"tools"`
	Messages []logMessage `json:"messages"`
}

type logMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (m *Model) log(req ports.ModelRequest) error {
	line := logLine{Step: req.Step, Tools: []string{}, Messages: []logMessage{}}
	for _, t := range req.Tools {
		line.Tools = append(line.Tools, t.Name)
	}
	for _, msg := range req.Messages {
		line.Messages = append(line.Messages, logMessage{Role: msg.Role, Content: msg.Content})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil { // Encode ends the line with \n
		return fmt.Errorf("scripted model: request log: %w", err)
	}

	// O_APPEND makes each write land whole at the end; the mutex keeps
	// this process's lines in the order of their writes. Opening per line
	// lets a test truncate or remove the file between reviews.
	m.logMu.Lock()
	defer m.logMu.Unlock()
	f, err := openLog(m.logPath)
	if err != nil {
		return fmt.Errorf("scripted model: request log: %w", err)
	}
	_, werr := f.Write(buf.Bytes())
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("scripted model: request log: %w", err)
	}
	return nil
}

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

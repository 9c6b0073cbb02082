// Package openai is the model adapter for an OpenAI-compatible
// chat-completions endpoint with tool calling: it implements
// [ports.Model] with the standard library alone (net/http,
// encoding/json), no SDK: ARCHITECTURE.md ("Dependencies and why") says
// why not openai-go.
//
// One [Client.Complete] is one POST {BaseURL}/chat/completions. The
// adapter does not retry: the pipeline decides what a failed turn means.
//
// What it protects:
//
//   - the API key goes in the Authorization header and nowhere else: no
//     error text carries it (the package does not log); errors do not
//     repeat the request URL, though a connection failure keeps the
//     network cause, which names the endpoint's host and port;
//   - a non-2xx answer becomes a [*StatusError] with the status code
//     alone; the body is never read into an error, since endpoints echo
//     prompts (and so repository content) in their error bodies;
//   - a response body is read up to [Options.MaxResponseBytes] and
//     refused beyond it ([ErrResponseTooLarge]);
//   - the caller's context, and [Options.Timeout], bound the whole
//     request, body included.
//
// Tool-call arguments arrive on the wire as a string that should hold
// JSON. Valid JSON is handed to the pipeline as it is; an empty string
// becomes {}; anything else is handed over as a JSON string value holding
// the raw text, so the pipeline's strict argument validation refuses the
// call (invalid_arguments) and tells the model, instead of the whole step
// failing on one sloppy turn.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// DefaultMaxResponseBytes caps a response body when
// [Options.MaxResponseBytes] is zero: 8 MiB.
const DefaultMaxResponseBytes = 8 << 20

// DefaultTimeout bounds one request when [Options.Timeout] is zero. The
// pipeline's own deadlines (the finder's 240 s) apply on top of it.
const DefaultTimeout = 2 * time.Minute

// Errors of the client. None of them carries the API key, the URL, a
// header or any part of a response body.
var (
	// ErrConfig: [New] was given an unusable configuration.
	ErrConfig = errors.New("openai: invalid configuration")
	// ErrResponseTooLarge: the response body exceeded the byte cap.
	ErrResponseTooLarge = errors.New("openai: response too large")
	// ErrMalformedResponse: a 2xx answer that is not a chat completion
	// (not JSON, or without a choice).
	ErrMalformedResponse = errors.New("openai: malformed response")
	// ErrRequestFailed: the request could not be sent or its answer not
	// read (connection refused, reset, TLS failure). A caller's
	// cancellation or deadline is wrapped as well, so errors.Is with
	// context.Canceled or context.DeadlineExceeded works.
	ErrRequestFailed = errors.New("openai: request failed")
)

// StatusError is a non-2xx answer of the endpoint. It holds the status
// code alone: the body may echo the prompt.
type StatusError struct {
	StatusCode int
}

func (e *StatusError) Error() string {
	return "openai: endpoint answered HTTP " + strconv.Itoa(e.StatusCode)
}

// Options configure a [Client].
type Options struct {
	// BaseURL is the API root, for example https://api.openai.com/v1
	// (QUAVON_LLM_BASE_URL); the client posts to BaseURL + "/chat/completions".
	// http or https, no user info, query or fragment.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer APIKey" (QUAVON_LLM_API_KEY).
	// Empty sends no Authorization header (local endpoints).
	APIKey string
	// Model is the model name sent with every request (QUAVON_LLM_MODEL).
	Model string
	// HTTPClient sends the requests; nil uses a new client with the
	// default transport. Its own Timeout, if any, applies as well.
	HTTPClient *http.Client
	// Timeout bounds one request, body included; zero means
	// [DefaultTimeout], negative means no bound beyond the caller's context.
	Timeout time.Duration
	// MaxResponseBytes caps a response body; zero means
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
}

// Client is a [ports.Model] backed by an OpenAI-compatible endpoint.
// Complete is safe for concurrent use.
type Client struct {
	endpoint string
	apiKey   string
	model    string
	http     *http.Client
	timeout  time.Duration
	maxBytes int64
}

var _ ports.Model = (*Client)(nil)

// New returns a client for opts, or an error wrapping [ErrConfig] that
// names the offending option (never its value).
func New(opts Options) (*Client, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, fmt.Errorf("%w: the model name is empty", ErrConfig)
	}
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	switch {
	case opts.BaseURL == "":
		return nil, fmt.Errorf("%w: the base URL is empty", ErrConfig)
	case err != nil:
		return nil, fmt.Errorf("%w: the base URL does not parse", ErrConfig)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: the base URL must be http or https", ErrConfig)
	case u.Host == "":
		return nil, fmt.Errorf("%w: the base URL has no host", ErrConfig)
	case u.User != nil:
		return nil, fmt.Errorf("%w: the base URL must not carry user info", ErrConfig)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("%w: the base URL must not carry a query or fragment", ErrConfig)
	}
	if strings.ContainsAny(opts.APIKey, "\r\n") {
		return nil, fmt.Errorf("%w: the API key contains a line break", ErrConfig)
	}
	if opts.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("%w: the response cap is negative", ErrConfig)
	}
	c := &Client{
		endpoint: strings.TrimRight(u.String(), "/") + "/chat/completions",
		apiKey:   opts.APIKey,
		model:    opts.Model,
		http:     opts.HTTPClient,
		timeout:  cmp.Or(opts.Timeout, DefaultTimeout),
		maxBytes: cmp.Or(opts.MaxResponseBytes, DefaultMaxResponseBytes),
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	return c, nil
}

// Wire format of the chat-completions API, the subset we use.
type (
	chatRequest struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		Tools    []chatTool    `json:"tools,omitempty"`
	}
	chatMessage struct {
		Role string `json:"role"`
		// Content is null for an assistant turn that only calls tools.
		Content    *string        `json:"content"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name string `json:"name"`
		// Arguments is a JSON string holding JSON on the wire; some
		// compatible servers send the object itself, which we accept.
		Arguments json.RawMessage `json:"arguments"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function toolFunction `json:"function"`
	}
	toolFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	chatResponse struct {
		Choices []struct {
			Message struct {
				Content   *string        `json:"content"`
				ToolCalls []chatToolCall `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
)

// Complete sends one chat-completions request and returns the first
// choice: its tool calls, or its content.
func (c *Client) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	body, err := c.encode(req)
	if err != nil {
		return ports.ModelResponse{}, err
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return ports.ModelResponse{}, fmt.Errorf("%w: cannot build the request", ErrRequestFailed)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return ports.ModelResponse{}, requestError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused; never keep it.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return ports.ModelResponse{}, &StatusError{StatusCode: resp.StatusCode}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return ports.ModelResponse{}, requestError(ctx, err)
	}
	if int64(len(raw)) > c.maxBytes {
		return ports.ModelResponse{}, ErrResponseTooLarge
	}
	return decode(raw)
}

func (c *Client) encode(req ports.ModelRequest) ([]byte, error) {
	out := chatRequest{Model: c.model, Messages: make([]chatMessage, 0, len(req.Messages))}
	for _, m := range req.Messages {
		cm := chatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			content := m.Content
			cm.Content = &content
		}
		for _, tc := range m.ToolCalls {
			s, err := json.Marshal(wireArguments(tc.Arguments))
			if err != nil {
				return nil, fmt.Errorf("openai: encode the arguments of tool call %q: %w", tc.ID, err)
			}
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{
				ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: s},
			})
		}
		out.Messages = append(out.Messages, cm)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("openai: the schema of tool %q is not valid JSON", t.Name)
		}
		out.Tools = append(out.Tools, chatTool{
			Type:     "function",
			Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("openai: encode the request: %w", err)
	}
	return body, nil
}

// wireArguments is the string the wire wants for a call's arguments: the
// JSON text, or, for arguments this package kept as a JSON string because
// the model sent invalid JSON, that original text, so the model sees its
// own turn unchanged.
func wireArguments(args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return "{}"
	}
	if args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) == nil {
			return s
		}
	}
	return string(args)
}

func decode(raw []byte) (ports.ModelResponse, error) {
	var resp chatResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return ports.ModelResponse{}, fmt.Errorf("%w: not a JSON chat completion", ErrMalformedResponse)
	}
	if len(resp.Choices) == 0 {
		return ports.ModelResponse{}, fmt.Errorf("%w: no choice", ErrMalformedResponse)
	}
	msg := resp.Choices[0].Message
	var out ports.ModelResponse
	if msg.Content != nil {
		out.Content = *msg.Content
	}
	for i, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // not a function call: nothing the pipeline can run
		}
		if tc.Function.Name == "" {
			return ports.ModelResponse{}, fmt.Errorf("%w: tool call %d has no name", ErrMalformedResponse, i)
		}
		id := tc.ID
		if id == "" {
			// Some compatible servers omit ids; the pipeline needs one to
			// answer the call.
			id = "call_" + strconv.Itoa(i+1)
		}
		args, err := arguments(tc.Function.Arguments)
		if err != nil {
			return ports.ModelResponse{}, fmt.Errorf("%w: tool call %d: %v", ErrMalformedResponse, i, err)
		}
		out.ToolCalls = append(out.ToolCalls, ports.ModelToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
	}
	return out, nil
}

// arguments turns the wire's arguments into JSON for the pipeline; see the
// package doc for invalid JSON.
func arguments(field json.RawMessage) (json.RawMessage, error) {
	field = bytes.TrimSpace(field)
	if len(field) == 0 || string(field) == "null" {
		return json.RawMessage("{}"), nil
	}
	if field[0] != '"' {
		// The object itself instead of a string (non-conforming servers).
		return append(json.RawMessage(nil), field...), nil
	}
	var s string
	if err := json.Unmarshal(field, &s); err != nil {
		return nil, errors.New("arguments are not a string")
	}
	text := strings.TrimSpace(s)
	if text == "" {
		return json.RawMessage("{}"), nil
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text), nil
	}
	// Invalid JSON: keep the text as a JSON string value.
	return append(json.RawMessage(nil), field...), nil
}

// requestError maps a transport failure to [ErrRequestFailed] without the
// URL that *url.Error would print, and keeps the context error reachable.
func requestError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w: %w", ErrRequestFailed, ctxErr)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("%w: %w", ErrRequestFailed, err)
}

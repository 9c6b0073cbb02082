package reviews

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/ports"
)

// ExternalTool is a tool from outside the repository (an allowlisted MCP
// tool) offered to the finder. Call runs the whole guarded call pipeline
// and returns the text the model sees; it is safe for concurrent use.
type ExternalTool interface {
	Spec() ports.ToolSpec
	Call(ctx context.Context, args json.RawMessage) string
}

// ReviewPipelineInput is what a review works on. ExternalTools are
// offered to the finder only.
type ReviewPipelineInput struct {
	Title         string
	Description   string
	Diff          string
	Files         map[string]string
	ExternalTools []ExternalTool
}

// ReviewPipelineOutput is the pipeline's result.
type ReviewPipelineOutput struct {
	Findings []review.Finding
	Summary  string
	// McpPrompt is true when the finder prompt carried McpToolsSection.
	McpPrompt bool
}

// Pipeline runs the three steps of a review: the finder (repository tools
// and the external tools), the verifier (repository tools only; keeps a
// candidate only when its evidence is in the diff or the files) and the
// summary (no tools).
type Pipeline struct {
	Model ports.Model
	// FinderWallClock bounds the finder; zero is limits.FinderWallClock.
	FinderWallClock time.Duration
}

// Limits of the repository tools' answers, of the verifier and of one
// model turn's tool calls (calls beyond it are answered, not run).
const (
	repoToolAnswerChars = 20000
	verifierMaxSteps    = 4
	maxToolCallsPerTurn = 16
)

// Run runs the pipeline. A model error fails the run (the job is retried);
// the external tools cannot fail it: their failures are answers.
func (p *Pipeline) Run(ctx context.Context, in ReviewPipelineInput) (ReviewPipelineOutput, error) {
	repo := repoTools{diff: in.Diff, files: in.Files}
	wall := p.FinderWallClock
	if wall <= 0 {
		wall = limits.FinderWallClock
	}
	finderCtx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	withMcp := len(in.ExternalTools) > 0
	external := map[string]ExternalTool{}
	specs := repo.specs()
	for _, t := range in.ExternalTools {
		spec := t.Spec()
		external[spec.Name] = t
		specs = append(specs, spec)
	}
	final, err := p.converse(finderCtx, ports.StepFinder, FinderPrompt(withMcp), reviewMessage(in), specs, limits.FinderMaxSteps,
		func(ctx context.Context, c ports.ModelToolCall) string {
			if t, ok := external[c.Name]; ok {
				return t.Call(ctx, c.Arguments)
			}
			return repo.call(c)
		})
	if err != nil && !(errors.Is(finderCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil) {
		return ReviewPipelineOutput{}, fmt.Errorf("finder: %w", err)
	}
	// A finder that ran out of its wall clock ends with what it has: no
	// candidates (slow external tools must not fail the review).
	candidates := parseFindings(final)

	kept, err := p.verify(ctx, in, repo, candidates)
	if err != nil {
		return ReviewPipelineOutput{}, fmt.Errorf("verifier: %w", err)
	}
	findingsJSON, _ := json.Marshal(map[string]any{"findings": kept})
	summary, err := p.converse(ctx, ports.StepSummary, summaryPrompt,
		"Pull request: "+in.Title+"\n\nVerified findings:\n"+string(findingsJSON), nil, 1, nil)
	if err != nil {
		return ReviewPipelineOutput{}, fmt.Errorf("summary: %w", err)
	}
	return ReviewPipelineOutput{Findings: kept, Summary: strings.TrimSpace(summary), McpPrompt: withMcp}, nil
}

// verify asks the verifier, then keeps a candidate only when the model
// kept it and its evidence is found, verbatim, in the diff or a file.
func (p *Pipeline) verify(ctx context.Context, in ReviewPipelineInput, repo repoTools, candidates []review.Finding) ([]review.Finding, error) {
	kept := []review.Finding{}
	if len(candidates) == 0 {
		return kept, nil
	}
	list, _ := json.Marshal(candidates)
	final, err := p.converse(ctx, ports.StepVerifier, verifierPrompt,
		reviewMessage(in)+"\n\nCandidate findings (index from 0):\n"+string(list), repo.specs(), verifierMaxSteps,
		func(_ context.Context, c ports.ModelToolCall) string { return repo.call(c) })
	if err != nil {
		return nil, err
	}
	var verdicts struct {
		Verdicts []struct {
			Index int  `json:"index"`
			Keep  bool `json:"keep"`
		} `json:"verdicts"`
	}
	_ = json.Unmarshal([]byte(jsonObject(final)), &verdicts)
	seen := map[int]bool{}
	for _, v := range verdicts.Verdicts {
		if !v.Keep || v.Index < 0 || v.Index >= len(candidates) || seen[v.Index] {
			continue
		}
		seen[v.Index] = true
		if c := candidates[v.Index]; repo.proves(c.Evidence) {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// converse runs one step: up to maxSteps model turns, executing the tool
// calls of each turn (concurrently, answers in call order) until the
// model answers with content. Running out of turns ends the step with
// empty content.
func (p *Pipeline) converse(ctx context.Context, step, system, user string, tools []ports.ToolSpec, maxSteps int,
	exec func(context.Context, ports.ModelToolCall) string) (_ string, err error) {
	ctx, span := startStep(ctx, step)
	turns := 0
	defer func() { endStep(span, turns, err) }()
	messages := []ports.Message{{Role: ports.RoleSystem, Content: system}, {Role: ports.RoleUser, Content: user}}
	for range maxSteps {
		turns++
		resp, err := p.Model.Complete(ctx, ports.ModelRequest{Step: step, Messages: messages, Tools: tools})
		if err != nil {
			return "", err
		}
		if len(resp.ToolCalls) == 0 || exec == nil {
			return resp.Content, nil
		}
		messages = append(messages, ports.Message{Role: ports.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		answers := make([]string, len(resp.ToolCalls))
		var wg sync.WaitGroup
		for i, c := range resp.ToolCalls {
			if i >= maxToolCallsPerTurn {
				answers[i] = `{"error": "too many tool calls in one turn"}`
				continue
			}
			wg.Go(func() {
				defer func() {
					if recover() != nil {
						answers[i] = `{"error": "internal"}`
					}
				}()
				answers[i] = exec(ctx, c)
			})
		}
		wg.Wait()
		for i, c := range resp.ToolCalls {
			messages = append(messages, ports.Message{Role: ports.RoleTool, Content: answers[i], ToolCallID: c.ID})
		}
	}
	return "", nil
}

// reviewMessage is the user message of the finder and the verifier.
func reviewMessage(in ReviewPipelineInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Title: %s\n\nDescription:\n%s\n\nDiff:\n%s\n\nFiles:", in.Title, in.Description, in.Diff)
	paths := make([]string, 0, len(in.Files))
	for p := range in.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b.WriteString("\n- " + p)
	}
	return b.String()
}

// parseFindings reads the finder's final answer; anything unreadable is
// no finding.
func parseFindings(content string) []review.Finding {
	var out struct {
		Findings []modelFinding `json:"findings"`
	}
	if json.Unmarshal([]byte(jsonObject(content)), &out) != nil {
		return nil
	}
	if out.Findings == nil {
		return nil
	}
	findings := make([]review.Finding, 0, len(out.Findings))
	for _, f := range out.Findings {
		findings = append(findings, review.Finding(f))
	}
	return findings
}

// modelFinding is a finding as the finder and the verifier answer it (the
// JSON their prompts ask for).
type modelFinding struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	Evidence string `json:"evidence"`
}

// jsonObject cuts the outermost {...} out of a model answer, which may
// wrap it in prose or a code fence.
func jsonObject(s string) string {
	start, end := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if start < 0 || end < start {
		return ""
	}
	return s[start : end+1]
}

// repoTools are the tools on the review's own content.
type repoTools struct {
	diff  string
	files map[string]string
}

func (repoTools) specs() []ports.ToolSpec {
	return []ports.ToolSpec{
		{Name: "read_file", Description: "Read a file of the review by its path.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "search_diff", Description: "Search the diff for a text; answers the matching lines.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)},
	}
}

func (r repoTools) call(c ports.ModelToolCall) string {
	var args struct {
		Path  string `json:"path"`
		Query string `json:"query"`
	}
	_ = json.Unmarshal(c.Arguments, &args)
	switch c.Name {
	case "read_file":
		content, ok := r.files[args.Path]
		if !ok {
			return `{"error": "no such file in the review"}`
		}
		return capChars(content, repoToolAnswerChars)
	case "search_diff":
		if args.Query == "" {
			return `{"error": "query is required"}`
		}
		var hits []string
		for _, line := range strings.Split(r.diff, "\n") {
			if strings.Contains(line, args.Query) {
				hits = append(hits, line)
			}
		}
		return capChars(strings.Join(hits, "\n"), repoToolAnswerChars)
	}
	return `{"error": "unknown tool"}`
}

// proves applies the evidence rule ([review.Proves]) to the diff and the
// review's files.
func (r repoTools) proves(evidence string) bool {
	sources := make([]string, 0, 1+len(r.files))
	sources = append(sources, r.diff)
	for _, content := range r.files {
		sources = append(sources, content)
	}
	return review.Proves(evidence, sources...)
}

// capChars cuts s to at most n characters (runes).
func capChars(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

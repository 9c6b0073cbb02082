// Package poison finds signs of tool poisoning in a tool definition
// (threat-analysis row MC4): text in a tool's name, description,
// annotations or input schema that addresses the model rather than the
// admin, hides itself, or reaches for another server's tools, for
// secrets or for another host. It is pure: no I/O, no clock.
//
// The findings are advice. They make the admin look again and confirm
// the tool; they do not block a server or a tool, and none of them means
// the tool is safe when absent: a rule set of phrases cannot read intent,
// and what the model sees of a tool is still only the admin's own
// description (tool.ModelDescription). Each finding has a code and an
// excerpt of at most MaxExcerptRunes characters, prefixed with where it
// was found ("inputSchema.properties.q.description: …"), white space
// runs written as one space, invisible characters written as U+XXXX, and
// passed through Context.Redact (the secret scanner's redaction) before
// it is cut, so no excerpt carries a secret or a raw invisible
// character. Scan returns at most one finding per code, the first field's
// in reading order (name, description, annotations, then the schema in
// key order), in the order of Codes:
//
//   - hidden_characters: a character tool.Invisible reports: zero-width
//     characters, bidi controls, ASCII controls such as an ANSI escape,
//     variation selectors, Unicode tag characters (ASCII smuggling; the
//     excerpt reads the tags as the ASCII they mirror).
//   - instruction: text addressed to the model, matched on the folded
//     words of egress.FoldWords (NFKC, UTS #39 skeletons, tag characters
//     read, invisible characters dropped, case): override phrases ("ignore
//     previous instructions", "disregard", "forget your instructions"),
//     secrecy ("do not tell the user", "without telling"), personas ("you
//     are now", "act as if", "pretend you are"), new orders ("new
//     instructions", "before using this tool … you must", "when X is
//     called … always"), urgency ("this is very important"), claimed
//     consent ("the user has authorized"), tool preference ("use this tool
//     instead of"), in English, German, Spanish, French, Italian,
//     Portuguese and Chinese; and on the shown text, the markup of prompts:
//     <IMPORTANT>, <SYSTEM>, <instructions> tags, role markers ("system:",
//     "<|im_start|>", "[INST]", "### System", "role": "system"). The word
//     "Important:" in prose is not a finding; the tag is.
//   - other_tool: a tool of another server of the tenant (OtherTools),
//     or a model-facing name mcp_<server>_<tool> or mcp__<server>__<tool>
//     of a server other than ServerName. The tool's own name and OwnTools
//     are ordinary. A name with an underscore, hyphen or digit is found at
//     word boundaries, a plain word ("search") only written as a name: in
//     quotes or backticks, or followed by "()" or " tool".
//   - encoded_payload: a base64 run (standard or URL-safe, at least 24
//     characters) or a hex run (at least 32 digits) that decodes to prose
//     (valid UTF-8, letters and spaces, at least one space) or to another
//     base64 run. A UUID, a git SHA, a SHA-256 digest, base64 of binary
//     data or of JSON without spaces (a JWT) is not one. The decoded text
//     is read again by instruction and secret_request (their excerpt says
//     "(base64 decoded)"), and decoded again, MaxDecodeDepth deep.
//   - secret_request: a file that holds credentials or a client's
//     configuration named anywhere (~/.ssh, id_rsa, .aws/credentials,
//     .env, .npmrc, mcp.json, …); a verb that makes the model supply
//     something (pass, include, send, provide, paste, read, upload, …)
//     followed within eight words by secret material (API key, access
//     token, password, credentials, cookies, environment variables,
//     system prompt, conversation history, "your token"), not after a
//     negation ("never send tokens") and not when the next word is about
//     the material ("token names", "key count"); a property whose name is
//     such material (the model fills it in: "system_prompt",
//     "contents_of_the_file"). "Requires an API token configured on the
//     server", "pagination token", "token count" are not findings.
//   - url: an http(s) link, a www. host, a bare domain followed by a path
//     (not an API version such as networking.k8s.io/v1) or a data: URI,
//     whose host is not of the server's site: the same host, the same
//     registrable domain (the last two labels, three under a country's
//     co.uk-like level), or a registrable domain of the same name under
//     another top-level domain (sentry.io for mcp.sentry.dev: one vendor;
//     an attacker's sentry.xyz would pass too). Links to other hosts are
//     reported even when they are documentation (docs.github.com for a
//     server at api.githubcopilot.com): few real descriptions carry links,
//     and the admin decides. With no ServerHost every link is one.
//   - padding: visible text after five or more blank lines, or after 40 or
//     more spaces in a row (tabs and Unicode spaces: U+00A0, U+2000–U+200A,
//     U+3000, Hangul fillers, U+2800), which pushes it out of the view an
//     admin reviews; white space at the end is not. A definition with more
//     than MaxTextBytes of text is padding too: its tail was not read.
//
// Bounds: MaxTextBytes (64 KiB) of text per definition, all fields
// together; MaxFields fields; the schema walked MaxSchemaDepth deep (it is
// read once with encoding/json, every keyword that holds schemas
// followed: properties, items, $defs, definitions, anyOf, oneOf, allOf,
// not, if/then/else, patternProperties…); MaxDecodes decoded texts,
// MaxDecodeDepth deep. Every rule is linear in the text read (Go's
// regexp), so Scan's work is bounded whatever the input
// (TestWorstCaseBounded, BenchmarkScan).
//
// What is left to the admin: whether a finding is an attack or ordinary
// prose of the server (a link to the vendor's docs, a tool of another
// server named on purpose), and everything the rules cannot see: an
// instruction worded in none of these phrases, a language they do not
// know, a harmless definition that changes later (the pin of domain/tool
// catches that change; Scan then reads the new definition).
package poison

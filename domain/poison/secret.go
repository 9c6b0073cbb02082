package poison

import (
	"regexp"
	"strings"
)

// secretFiles are files that hold credentials or a client's
// configuration: naming one in a tool definition is a request for it,
// whatever the verb. Looked for in the shown text in lower case.
var secretFiles = []string{
	"~/.ssh", ".ssh/", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws/credentials", "aws_credentials",
	".cursor/mcp.json", "mcp.json", "claude_desktop_config.json", ".npmrc", ".netrc", ".pypirc", ".git-credentials",
	".docker/config.json", "/etc/passwd", "/etc/shadow", ".bash_history", ".zsh_history", ".kube/config", ".gnupg",
}

// secretMaterial is what a request must not get from the model: strong
// words alone, and a bare "token", "key" or "secret" only when it is
// someone's ("your token", "the user's key").
const secretMaterial = `(?:(?:api|access|secret|private|auth|authentication|bearer|session|oauth|refresh|github|gitlab|openai|aws|ssh|personal access|npm|slack|stripe) (?:keys?|tokens?)` +
	`|passwords?|passphrases?|passcodes?|credentials?|cookies?|secrets|env(?:ironment)? var(?:iable)?s?|env file|dot env|seed phrase|recovery phrase|2fa codes?|otp codes?` +
	`|system prompt|conversation history|chat history|previous messages|full conversation|complete conversation` +
	`|(?:your|the user s|users|their|his|her|my) (?:\w+ )?(?:tokens?|keys?|secrets?))`

// secretVerbs make the model supply something (folded: "i" is "l").
var secretVerbs = wordSet("pass include send provide supply paste put give share attach append upload read forward submit enter type fill copy post confirm output print reveal leak exfiltrate dump extract collect insert")

// secretNegations before a verb make it no request ("never send").
var secretNegations = wordSet("never not dont t without")

// secretAbout after the material says it is about the material, not
// the material: "token names", "key count", "password policy".
var secretAbout = wordSet("name names count counts id ids type types usage limit limits pattern patterns scope scopes policy policies rotation expiry expiration prefix hint hints length manager store vault scanning alert alerts")

// secretMaterialPhrase finds the material, anchored at its first words.
var secretMaterialPhrase = wordsPhrase(
	"api|access|secret|private|auth|authentication|bearer|session|oauth|refresh|github|gitlab|openai|aws|ssh|personal|npm|slack|stripe|"+
		"password|passphrase|passcode|credential|cookie|env|dot|seed|recovery|2fa|otp|system|conversation|chat|previous|full|complete|"+
		"your|the user|users|their|his|her|my",
	secretMaterial+`\b`)

// secretWindow is how many words before the material a verb may be.
const secretWindow = 9

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(strings.ReplaceAll(words, "i", "l")) {
		m[w] = true
	}
	return m
}

// secretName: a property whose name is the material: the model fills it in.
var secretName = []*regexp.Regexp{
	regexp.MustCompile(strings.ReplaceAll(`(?:^| )`+secretMaterial+`(?: |$)`, "i", "l")),
	regexp.MustCompile(strings.ReplaceAll(`(?:^| )contents? of (?:the |a |your |any )?(?:\w+ ){0,4}files?\b`, "i", "l")),
	regexp.MustCompile(strings.ReplaceAll(`(?:^| )(?:content|contents|reading|file|read)(?: \w+){0,3} (?:ssh|env|credentials|key|keys|rsa)\b`, "i", "l")),
}

// secretHan: the request in Chinese.
var secretHan = phrase{anchors: []string{"读取", "发送", "提供", "传入", "粘贴", "包含"},
	re: mustAnchored(`(?:读取|发送|提供|传入|粘贴|包含).{0,12}(?:密钥|私钥|密码|令牌|凭证|凭据|环境变量|系统提示)`)}

// secretRequest reports a request that the model pass, send or read
// credentials or a secret file (see doc.go).
func (s *scan) secretRequest(v view) (string, bool) {
	low := lowerASCII(v.shown)
	best := secretFile(low)
	if i := secretHan.first(v.shown); i >= 0 && (best < 0 || i < best) {
		best = i
	}
	if i := secretAsked(v.words); i >= 0 {
		if j := wordsAt(v, i); best < 0 || j < best {
			best = j
		}
	}
	if best < 0 && isPropertyName(v.where) && len(v.words) <= phraseSpan {
		for _, re := range secretName {
			if re.MatchString(v.words) {
				best = 0
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return s.atShown(v, best), true
}

// secretFile is the offset of the first secret file named in low, or -1;
// ".env" counts as a name of its own (not ".env.example", "dev.env").
func secretFile(low string) int {
	best := -1
	for _, f := range secretFiles {
		if i := strings.Index(low, f); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	for off := 0; off < len(low); {
		i := strings.Index(low[off:], ".env")
		if i < 0 || best >= 0 && off+i >= best {
			break
		}
		i += off
		if envName(low, i) {
			return i
		}
		off = i + 1
	}
	return best
}

// envName reports a ".env" at i that is a file name of its own.
func envName(low string, i int) bool {
	before := i == 0 || strings.IndexByte(" \t\n'\"`(/~", low[i-1]) >= 0
	j := i + len(".env")
	after := j == len(low) || strings.IndexByte(" \t\n'\"`),;:", low[j]) >= 0 ||
		low[j] == '.' && (j+1 == len(low) || low[j+1] == ' ' || low[j+1] == '\n')
	return before && after
}

// secretAsked is the offset in words of the first secret material that
// a verb asks for (one of the secretWindow words before it), not after a
// negation and not followed by a word about the material, or -1.
func secretAsked(words string) int {
	verbAt := -1
	if secretMaterialPhrase.firstWhere(words, func(start, end int) bool {
		verbAt = askedBefore(words, start)
		next, _, _ := strings.Cut(strings.TrimPrefix(words[end:min(len(words), end+32)], " "), " ")
		return verbAt >= 0 && !secretAbout[next]
	}) < 0 {
		return -1
	}
	return verbAt
}

// askedBefore is the offset of the verb among the secretWindow words
// before start that asks for what starts there, or -1.
func askedBefore(words string, start int) int {
	before := strings.Fields(words[max(0, start-16*secretWindow):start])
	if start-16*secretWindow > 0 && len(before) > 0 {
		before = before[1:] // cut in the middle
	}
	if len(before) > secretWindow {
		before = before[len(before)-secretWindow:]
	}
	for k, w := range before {
		if secretVerbs[w] && (k == 0 || !secretNegations[before[k-1]]) && (k < 2 || !secretNegations[before[k-2]]) {
			return start - len(strings.Join(before[k:], " ")) - 1
		}
	}
	return -1
}

// propertyNameWhere: a field that is a property's name ends in
// properties.<name>.
var propertyNameWhere = regexp.MustCompile(`\.(?:properties|\$defs|definitions|patternProperties)\.[^.]*$`)

func isPropertyName(where string) bool { return propertyNameWhere.MatchString(where) }

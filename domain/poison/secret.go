package poison

import "regexp"

// secretPaths are files that hold credentials or a client's
// configuration: naming one in a tool definition is a request for it,
// whatever the verb. Read in the shown text, any case.
var secretPaths = regexp.MustCompile(`(?i)` +
	`~/\.ssh\b|\.ssh/|id_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\baws[_ ]credentials\b` +
	`|\.cursor/mcp\.json|\bmcp\.json\b|claude_desktop_config\.json|\.npmrc\b|\.netrc\b|\.pypirc\b|\.git-credentials\b` +
	`|\.docker/config\.json|/etc/(?:passwd|shadow)\b|\.(?:bash|zsh)_history\b|\.kube/config\b|\.gnupg\b` +
	`|(?:^|[\s'"\x60(/~])\.env(?:$|[\s'"\x60),;:]|\.(?:$|\s))`)

// secretMaterial is what a request must not get from the model: strong
// words alone, and a bare "token", "key" or "secret" only when it is
// someone's ("your token", "the user's key").
const secretMaterial = `(?:(?:api|access|secret|private|auth|authentication|bearer|session|oauth|refresh|github|gitlab|openai|aws|ssh|personal access|npm|slack|stripe) (?:keys?|tokens?)` +
	`|passwords?|passphrases?|passcodes?|credentials?|cookies?|secrets|env(?:ironment)? var(?:iable)?s?|env file|dot env|seed phrase|recovery phrase|2fa codes?|otp codes?` +
	`|system prompt|conversation history|chat history|previous messages|full conversation|complete conversation` +
	`|(?:your|the user s|users|their|his|her|my) (?:\w+ )?(?:tokens?|keys?|secrets?))`

// secretRequest: a verb that makes the model supply something, then the
// material within a few words; "never send tokens" is not one.
var secretRequest = wordsRE(
	`(?:pass|include|send|provide|supply|paste|put|give|share|attach|append|upload|read|forward|submit|enter|type|fill|copy|post|confirm|output|print|reveal|leak|exfiltrate|dump|extract|collect|insert)(?: \w+){0,8}? ` + secretMaterial + `\b`,
)

// secretNotMaterial: the word after the material says it is about the
// material, not the material: "token names", "key count", "password
// policy".
var secretNotMaterial = wordsRE(`^ (?:names?|count|counts|ids?|types?|usage|limits?|patterns?|scopes?|policy|policies|rotation|expiry|expiration|prefix|hints?|length|manager|store|vault|scanning|alerts?)\b`)

// secretNegation: a negation before the verb.
var secretNegation = wordsRE(`(?:never|not|don t|dont|no need to|without) (?:\w+ )?$`)

// secretName: a property whose name is the material: the model fills it in.
var secretName = wordsRE(`(?:^| )`+secretMaterial+`(?: |$)`, `(?:^| )contents? of (?:the |a |your |any )?(?:\w+ ){0,4}files?\b`, `(?:^| )(?:content|contents|reading|file|read)(?: \w+){0,3} (?:ssh|env|credentials|key|keys|rsa)\b`)

// secretHan: the request in Chinese.
var secretHan = regexp.MustCompile(`(?:读取|发送|提供|传入|粘贴|包含).{0,12}(?:密钥|私钥|密码|令牌|凭证|凭据|环境变量|系统提示)`)

// secretRequest reports a request that the model pass, send or read
// credentials or a secret file (see doc.go).
func (s *scan) secretRequest(v view) (string, bool) {
	if m := secretPaths.FindStringIndex(v.shown); m != nil {
		return s.atShown(v, m[0]), true
	}
	if m := secretHan.FindStringIndex(v.shown); m != nil {
		return s.atShown(v, m[0]), true
	}
	for _, m := range secretRequest.FindAllStringIndex(v.words, 16) {
		if !secretNegation.MatchString(v.words[:m[0]]) && !secretNotMaterial.MatchString(v.words[m[1]:]) {
			return s.atWords(v, m[0]), true
		}
	}
	if isPropertyName(v.where) && secretName.MatchString(v.words) {
		return s.atShown(v, 0), true
	}
	return "", false
}

// isPropertyName reports a field that is a property's name: its where
// ends in properties.<name>.
var propertyNameWhere = regexp.MustCompile(`\.(?:properties|\$defs|definitions|patternProperties)\.[^.]*$`)

func isPropertyName(where string) bool { return propertyNameWhere.MatchString(where) }

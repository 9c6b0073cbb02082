package poison

import (
	"regexp"
	"strings"
)

// wordsRE compiles phrase patterns for the folded words of a view
// (egress.FoldWords): lower case, one space between words, "i" read as
// "l" as Fold reads it, so the patterns are written in plain words and
// folded here. A pattern must not use "i" as regexp syntax.
func wordsRE(patterns ...string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(`(?:\b|^)(?:`+strings.Join(patterns, "|")+`)`, "i", "l"))
}

// instructionWords are phrases addressed to the model, in the folded
// words of a text.
var instructionWords = wordsRE(
	// override: ignore (all) previous instructions, forget your rules
	`(?:ignore|disregard|forget|override|overrule|bypass) (?:(?:all|any|of|the|your|my|these|those|every|everything) )*(?:previous|prior|above|earlier|preceding|former|original|old|system|existing|other|initial) (?:\w+ )?(?:instructions?|prompts?|rules|guidelines|guidance|directions|directives|commands|context|constraints|restrictions|messages|orders)\b`,
	`(?:ignore|disregard|forget) (?:(?:all|any|the|your|my|of) )*(?:instructions|prompt|system prompt|rules|guidelines|safety guidelines)\b`,
	`disregard (?:the |any |all )?(?:user s|users|user|previous|prior|above)\b`,
	`forget everything\b`,
	// secrecy towards the user
	`(?:do not|don t|dont|never|without) (?:tell|telling|mention|mentioning|inform|informing|notify|notifying|alert|alerting|reveal|revealing|disclose|disclosing|show|showing|let)\b(?: \w+){0,4} (?:the user|users|user|anyone|anybody|the human|them)\b`,
	`(?:do not|don t|dont|never) (?:mention|reveal|disclose|explain) (?:this|that|these|it|them|the instructions?|anything)\b`,
	`without (?:telling|informing|notifying|alerting)\b`,
	`(?:do not|don t|dont|never|without) ask(?:ing)? (?:the user )?(?:for )?(?:permission|confirmation|consent)\b`,
	`keep (?:this|it|these|that|them)(?: \w+)? (?:secret|hidden|confidential|private|between us)\b`,
	`(?:tell|inform) the user nothing\b`,
	// personas and modes
	`you are now\b`, `from now on\b`, `do anything now\b`,
	`(?:act|behave|respond) as (?:if|though)\b`,
	`(?:act|behave) as (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|different|new|evil|dan|admin|administrator|system|root|superuser|hacker)\b`,
	`pretend (?:to be|you are|you re|that|you have)\b`,
	`(?:developer|god|dan|jailbreak|jailbroken|unrestricted) mode\b`,
	// new orders, urgency, claimed authority
	`(?:new|updated|real|actual|true|hidden|secret|override) (?:instructions|system prompt|directives)\b`,
	`before (?:using|calling|invoking|running|executing|you use|you call) (?:this|any|the|these)(?: \w+)? (?:tool|tools|function|command|commands)\b(?: \w+){0,6}? (?:you must|you need to|you have to|always|read)\b`,
	`(?:when|whenever|each time|every time|if)(?: \w+){1,4} (?:is|are) (?:called|invoked|used|run)\b(?: \w+){0,8}? (?:you must|always|make sure|change|add|prepend|append|send|include|use)\b`,
	`this is (?:very |extremely |really |super |absolutely |vitally )+(?:important|critical|crucial)\b`,
	`very very\b`,
	`(?:always |only )?(?:use|call) this tool instead of\b`,
	`this (?:tool )?is the (?:preferred|updated|official|new|correct|real) version of\b`,
	`the user (?:has|have) (?:already )?(?:authorized|authorised|approved|consented|allowed|given permission|granted)\b`,
	`you (?:are|have been) (?:now )?(?:authorized|authorised|permitted|allowed) to (?:bypass|ignore|skip|access|send|read)\b`,
	// German, Spanish, French, Italian, Portuguese
	`(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte)(?: \w+){0,2} (?:vorherigen|bisherigen|obigen|vorigen|fruheren|alten|vorangegangenen) (?:anweisungen|instruktionen|befehle|regeln)\b`,
	`(?:sag|sage|sagen sie|erzahle|verrate|teile)(?: \w+){0,3} (?:benutzer|nutzer|anwender)(?: \w+){0,2} nichts\b`,
	`(?:ignora|ignorar|ignore|olvida)(?: \w+){0,2} (?:instrucciones|indicaciones|instrucoes) (?:anteriores|previas)\b`,
	`no (?:se lo |le |lo )?(?:digas|menciones|cuentes|informes)(?: nada)? al usuario\b`,
	`(?:ignore|ignorez|ignorer|oublie|oubliez)(?: \w+){0,2} (?:instructions|consignes) (?:precedentes|anterieures)\b`,
	`ne (?:le |lui |rien )?(?:dis|dites|mentionne|mentionnez|revele|revelez)(?: \w+){0,2} (?:a )?l utilisateur\b`,
	`(?:ignora|dimentica)(?: \w+){0,2} istruzioni precedenti\b`,
)

// instructionHan are the phrases of instructionWords in Chinese, where
// words have no spaces and \b does not apply.
var instructionHan = regexp.MustCompile(
	`忽略(?:之前|以前|先前|上面|上述|前面)?的?(?:所有|一切|全部)?的?(?:指令|指示|说明|命令|规则)` +
		`|不要(?:告诉|通知|提醒|告知)(?:用户|使用者)` +
		`|你现在是|从现在开始`)

// instructionMarkup are the tags and role markers of a chat template or
// a prompt, in the shown text.
var instructionMarkup = regexp.MustCompile(`(?i)` +
	`</?(?:important|system|instructions?|secret|hidden|admin|critical|prompt|sys|rules|context|override)\b[^<>\n]{0,40}>` +
	`|<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>` +
	`|\[/?(?:inst|sys|system)\]|<</?sys>>` +
	`|(?:^|\n)[ \t]*(?:#{1,6}[ \t]*)?(?:system|assistant|developer)[ \t]*(?::|\n)` +
	`|(?:^|\n)[ \t]*#{1,6}[ \t]*(?:system|instructions?)\b` +
	`|"role"[ \t]*:[ \t]*"(?:system|assistant|developer)"`)

// instruction reports text addressed to the model (see doc.go).
func (s *scan) instruction(v view) (string, bool) {
	if i, ok := firstMatch(v, []*regexp.Regexp{instructionWords, instructionHan}, []*regexp.Regexp{instructionMarkup}); ok {
		return s.atShown(v, i), true
	}
	return "", false
}

// firstMatch is the offset in v.shown of the first match of a pattern of
// words in v.words or of shown in v.shown.
func firstMatch(v view, words, shown []*regexp.Regexp) (int, bool) {
	best, found := len(v.shown)+1, false
	for _, re := range words {
		if m := re.FindStringIndex(v.words); m != nil {
			best, found = min(best, wordStart(v.shown, strings.Count(v.words[:m[0]], " "))), true
		}
	}
	for _, re := range shown {
		if m := re.FindStringIndex(v.shown); m != nil {
			best, found = min(best, m[0]), true
		}
	}
	return best, found
}

package poison

// instructionPhrases are phrases addressed to the model, in the folded
// words of a text (wordsPhrase), and in Chinese, where words have no
// spaces.
var instructionPhrases = []phrase{
	// override: ignore (all) previous instructions, forget your rules
	wordsPhrase("ignore|disregard|forget|override|overrule|bypass",
		`(?:ignore|disregard|forget|override|overrule|bypass) (?:(?:all|any|of|the|your|my|these|those|every|everything) )*(?:previous|prior|above|earlier|preceding|former|original|old|system|existing|other|initial) (?:\w+ )?(?:instructions?|prompts?|rules|guidelines|guidance|directions|directives|commands|context|constraints|restrictions|messages|orders)\b`),
	wordsPhrase("ignore|disregard|forget",
		`(?:ignore|disregard|forget) (?:(?:all|any|the|your|my|of) )*(?:instructions|prompt|system prompt|rules|guidelines|safety guidelines)\b`),
	wordsPhrase("disregard", `disregard (?:the |any |all )?(?:user s|users|user|previous|prior|above)\b`),
	wordsPhrase("forget everything", `forget everything\b`),
	// secrecy towards the user
	wordsPhrase("do not|don t|dont|never|without",
		`(?:do not|don t|dont|never|without) (?:tell|telling|mention|mentioning|inform|informing|notify|notifying|alert|alerting|reveal|revealing|disclose|disclosing|show|showing|let)\b(?: \w+){0,4} (?:the user|users|user|anyone|anybody|the human|them)\b`),
	wordsPhrase("do not|don t|dont|never",
		`(?:do not|don t|dont|never) (?:mention|reveal|disclose|explain) (?:this|that|these|it|them|the instructions?|anything)\b`),
	wordsPhrase("without", `without (?:telling|informing|notifying|alerting)\b`),
	wordsPhrase("do not|don t|dont|never|without",
		`(?:do not|don t|dont|never|without) ask(?:ing)? (?:the user )?(?:for )?(?:permission|confirmation|consent)\b`),
	wordsPhrase("keep", `keep (?:this|it|these|that|them)(?: \w+)? (?:secret|hidden|confidential|private|between us)\b`),
	wordsPhrase("tell|inform", `(?:tell|inform) the user nothing\b`),
	// personas and modes
	wordsPhrase("you are now|from now on|do anything now", `(?:you are now|from now on|do anything now)\b`),
	wordsPhrase("act|behave|respond", `(?:act|behave|respond) as (?:if|though)\b`),
	wordsPhrase("act|behave",
		`(?:act|behave) as (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|different|new|evil|dan|admin|administrator|system|root|superuser|hacker)\b`),
	wordsPhrase("pretend", `pretend (?:to be|you are|you re|that|you have)\b`),
	wordsPhrase("developer|god|dan|jailbreak|jailbroken|unrestricted", `(?:developer|god|dan|jailbreak|jailbroken|unrestricted) mode\b`),
	// new orders, urgency, claimed authority, tool preference
	wordsPhrase("new|updated|real|actual|true|hidden|secret|override",
		`(?:new|updated|real|actual|true|hidden|secret|override) (?:instructions|system prompt|directives)\b`),
	wordsPhrase("before",
		`before (?:using|calling|invoking|running|executing|you use|you call) (?:this|any|the|these)(?: \w+)? (?:tool|tools|function|command|commands)\b(?: \w+){0,6}? (?:you must|you need to|you have to|always|read)\b`),
	wordsPhrase("when|whenever|each time|every time|if",
		`(?:when|whenever|each time|every time|if)(?: \w+){1,4} (?:is|are) (?:called|invoked|used|run)\b(?: \w+){0,8}? (?:you must|always|make sure|change|add|prepend|append|send|include|use)\b`),
	wordsPhrase("this is", `this is (?:very |extremely |really |super |absolutely |vitally )+(?:important|critical|crucial)\b`),
	wordsPhrase("very very", `very very\b`),
	wordsPhrase("always|only|use|call", `(?:always |only )?(?:use|call) this tool instead of\b`),
	wordsPhrase("this", `this (?:tool )?is the (?:preferred|updated|official|new|correct|real) version of\b`),
	wordsPhrase("the user", `the user (?:has|have) (?:already )?(?:authorized|authorised|approved|consented|allowed|given permission|granted)\b`),
	wordsPhrase("you", `you (?:are|have been) (?:now )?(?:authorized|authorised|permitted|allowed) to (?:bypass|ignore|skip|access|send|read)\b`),
	// German, Spanish, French, Italian, Portuguese
	wordsPhrase("ignoriere|ignorier|ignorieren|vergiss|vergessen|missachte",
		`(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte)(?: \w+){0,2} (?:vorherigen|bisherigen|obigen|vorigen|fruheren|alten|vorangegangenen) (?:anweisungen|instruktionen|befehle|regeln)\b`),
	wordsPhrase("sag|sage|sagen|erzahle|verrate|teile",
		`(?:sag|sage|sagen sie|erzahle|verrate|teile)(?: \w+){0,3} (?:benutzer|nutzer|anwender)(?: \w+){0,2} nichts\b`),
	wordsPhrase("ignora|ignorar|ignore|olvida",
		`(?:ignora|ignorar|ignore|olvida)(?: \w+){0,2} (?:instrucciones|indicaciones|instrucoes) (?:anteriores|previas)\b`),
	wordsPhrase("no", `no (?:se lo |le |lo )?(?:digas|menciones|cuentes|informes)(?: nada)? al usuario\b`),
	wordsPhrase("ignore|ignorez|ignorer|oublie|oubliez",
		`(?:ignore|ignorez|ignorer|oublie|oubliez)(?: \w+){0,2} (?:instructions|consignes) (?:precedentes|anterieures)\b`),
	wordsPhrase("ne", `ne (?:le |lui |rien )?(?:dis|dites|mentionne|mentionnez|revele|revelez)(?: \w+){0,2} (?:a )?l utilisateur\b`),
	wordsPhrase("ignora|dimentica", `(?:ignora|dimentica)(?: \w+){0,2} istruzioni precedenti\b`),
	// Chinese: no spaces between words
	{anchors: []string{"忽略"}, re: mustAnchored(`忽略(?:之前|以前|先前|上面|上述|前面)?的?(?:所有|一切|全部)?的?(?:指令|指示|说明|命令|规则)`)},
	{anchors: []string{"不要"}, re: mustAnchored(`不要(?:告诉|通知|提醒|告知)(?:用户|使用者)`)},
	{anchors: []string{"你现在是", "从现在开始"}, re: mustAnchored(`(?:你现在是|从现在开始)`)},
}

// instructionMarkup are the tags and role markers of a chat template or
// a prompt, in the shown text (textPhrase).
var instructionMarkup = []phrase{
	textPhrase("<", `</?(?:important|system|instructions?|secret|hidden|admin|critical|prompt|sys|rules|context|override)\b[^<>\n]{0,40}>|<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>|<</?sys>>`),
	textPhrase("[", `\[/?(?:inst|sys|system)\]`),
	textPhrase("system|assistant|developer|#", `(?:#{1,6}[ \t]*)?(?:system|assistant|developer)[ \t]*(?::|\n)|#{1,6}[ \t]*(?:system|instructions?)\b`),
	textPhrase(`"role"`, `"role"[ \t]*:[ \t]*"(?:system|assistant|developer)"`),
}

// instruction reports text addressed to the model (see doc.go).
func (s *scan) instruction(v view) (string, bool) {
	best := -1
	if i := firstOf(v.words, instructionPhrases); i >= 0 {
		best = wordsAt(v, i)
	}
	if i := firstLineMarkup(lowerASCII(v.shown)); i >= 0 && (best < 0 || i < best) {
		best = i
	}
	if best < 0 {
		return "", false
	}
	return s.atShown(v, best), true
}

// firstLineMarkup is the first markup match; role markers and headings
// count only at the start of a line.
func firstLineMarkup(low string) int {
	best := -1
	for k, p := range instructionMarkup {
		i := p.first(low)
		if k == 2 {
			i = lineStartMatch(low, p)
		}
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// lineStartMatch is the first match of p at the start of a line (after
// spaces or tabs), or -1.
func lineStartMatch(low string, p phrase) int {
	for start := 0; start <= len(low); {
		i := start
		for i < len(low) && (low[i] == ' ' || low[i] == '\t') {
			i++
		}
		if p.re.MatchString(low[i:min(len(low), i+phraseSpan)]) {
			return i
		}
		nl := indexByteFrom(low, '\n', i)
		if nl < 0 {
			return -1
		}
		start = nl + 1
	}
	return -1
}

func indexByteFrom(s string, c byte, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

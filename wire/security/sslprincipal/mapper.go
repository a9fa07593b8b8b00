// Package sslprincipal turns the certificate of a TLS client into its
// Kafka principal name: the subject rendered as Java's
// X500Principal.getName() renders it (RFC 2253, DN), then mapped by
// ssl.principal.mapping.rules (Kafka's SslPrincipalMapper, KIP-371).
package sslprincipal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The rule grammar of Kafka's SslPrincipalMapper: DEFAULT, or
// RULE:pattern/replacement/ with an optional L or U (lower/upper case),
// '\' escaping '/' inside pattern and replacement. The splitter finds the
// rules in a comma separated list; an empty entry is ignored.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter = regexp.MustCompile(`\s*(` + rulePattern + `)\s*(,\s*|$)`)
	ruleParser   = regexp.MustCompile(`^(?:` + rulePattern + `)`)
)

// DefaultRules is ssl.principal.mapping.rules' default: the DN unchanged.
const DefaultRules = "DEFAULT"

// Mapper maps distinguished names to principal names by its rules, the
// first rule that applies deciding. Safe for concurrent use.
type Mapper struct {
	rules []rule
}

type rule struct {
	isDefault  bool
	src        string         // the pattern as written, for String
	pattern    *regexp.Regexp // for the replacement (unanchored, as Java's replaceAll)
	whole      *regexp.Regexp // the pattern anchored at both ends (Java's Matcher.matches)
	groups     int
	repl       string // the replacement as written
	template   string // the replacement in regexp.Expand syntax
	lower, upp bool
}

// Parse reads ssl.principal.mapping.rules ("" and "DEFAULT" keep the DN).
// Errors: a rule that is not DEFAULT or RULE:pattern/replacement/[LU], or
// a pattern that is not a regular expression, with Kafka's message.
func Parse(rules string) (*Mapper, error) {
	var m Mapper
	for _, sm := range ruleSplitter.FindAllStringSubmatch(strings.TrimSpace(rules), -1) {
		text := sm[1]
		p := ruleParser.FindStringSubmatchIndex(text)
		if p == nil {
			return nil, fmt.Errorf("invalid rule: %s", text)
		}
		if p[1] != len(text) {
			return nil, fmt.Errorf("invalid rule: `%s`, unmatched substring: `%s`", text, text[p[1]:])
		}
		group := func(i int) (string, bool) {
			if p[2*i] < 0 {
				return "", false
			}
			return text[p[2*i]:p[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, rule{isDefault: true})
			continue
		}
		pat, ok := group(2)
		if !ok {
			continue // an empty entry
		}
		repl, _ := group(4)
		flag, _ := group(6)
		r, err := newRule(pat, repl, flag)
		if err != nil {
			return nil, err
		}
		m.rules = append(m.rules, r)
	}
	return &m, nil
}

func newRule(pat, repl, flag string) (rule, error) {
	re, err := regexp.Compile(pat)
	if err != nil {
		return rule{}, fmt.Errorf("invalid rule pattern %q: %w", pat, err)
	}
	whole, err := regexp.Compile(`^(?:` + pat + `)$`)
	if err != nil {
		return rule{}, fmt.Errorf("invalid rule pattern %q: %w", pat, err)
	}
	r := rule{src: pat, pattern: re, whole: whole, groups: re.NumSubexp(), repl: repl, lower: flag == "L", upp: flag == "U"}
	if r.template, err = javaReplacement(repl, r.groups); err != nil {
		return rule{}, fmt.Errorf("invalid rule replacement %q: %w", repl, err)
	}
	return r, nil
}

// javaReplacement rewrites a java.util.regex replacement ("$1", "\$",
// "${name}") as a Go regexp template ("${1}", "$$"). As Kafka's rules do,
// a reference to a group the pattern does not have is literal text
// ("$4" with three groups), and of a number's digits only as many are
// read as name an existing group ("$12" with one group is group 1, "2").
func javaReplacement(s string, groups int) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case c == '\\':
			return "", fmt.Errorf("character to be escaped is missing")
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("named capturing group is missing trailing '}'")
			}
			b.WriteString(s[i : i+end+1])
			i += end
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			n := int(s[j] - '0')
			if n > groups && !(s[j] == '0') {
				b.WriteString("$$") // no such group: literal, as Kafka's escapeLiteralBackReferences makes it
				continue
			}
			j++
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				nn := n*10 + int(s[j]-'0')
				if nn > groups {
					break
				}
				n = nn
				j++
			}
			b.WriteString("${" + strconv.Itoa(n) + "}")
			i = j - 1
		case c == '$':
			return "", fmt.Errorf("illegal group reference")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// Name maps a distinguished name (RFC 2253, as DN renders it) to a
// principal name. Errors: no rule applies (Kafka's NoMatchingRule).
func (m *Mapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		if out, ok := r.apply(dn); ok {
			return out, nil
		}
	}
	return "", fmt.Errorf("no rules apply to %s, rules %s", dn, m.String())
}

func (r rule) apply(dn string) (string, bool) {
	if r.isDefault {
		return dn, true
	}
	if !r.whole.MatchString(dn) {
		return "", false
	}
	out := r.pattern.ReplaceAllString(dn, r.template)
	switch {
	case r.lower:
		out = strings.ToLower(out)
	case r.upp:
		out = strings.ToUpper(out)
	}
	return out, true
}

// String renders the rules as Kafka's SslPrincipalMapper.toString does
// (inside its brackets): "[RULE:pattern/replacement/L, DEFAULT]".
func (m *Mapper) String() string {
	parts := make([]string, len(m.rules))
	for i, r := range m.rules {
		if r.isDefault {
			parts[i] = "DEFAULT"
			continue
		}
		s := "RULE:" + r.src + "/" + r.repl
		if r.lower {
			s += "/L"
		} else if r.upp {
			s += "/U"
		}
		parts[i] = s
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

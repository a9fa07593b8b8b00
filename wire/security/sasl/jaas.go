package sasl

import (
	"errors"
	"fmt"
	"strings"
)

// LoginModule is one entry of a sasl.jaas.config value: the login module
// class, its control flag and its options, e.g.
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	  username="admin" password="admin-secret" user_alice="alice-secret";
type LoginModule struct {
	Class   string            // e.g. org.apache.kafka.common.security.plain.PlainLoginModule
	Flag    string            // REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL (upper-cased)
	Options map[string]string // option name → value, quotes removed
}

// Login module classes of the mechanisms Gregor serves.
const (
	PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// ParseJAAS parses a sasl.jaas.config value the way Kafka's JaasConfig
// does (a java.io.StreamTokenizer): one or more entries
// `<class> <flag> (<name>=<value>)*;`, values as words or in double (or
// single) quotes with backslash escapes, `//` and `/* */` comments.
// Errors carry JaasConfig's messages: no login module, a missing or bad
// control flag, a key without a value (an unquoted number is no value, as
// in Kafka), an entry not terminated by ';'.
func ParseJAAS(s string) ([]LoginModule, error) {
	t := &jaasTokenizer{s: s}
	var out []LoginModule
	for {
		tok, err := t.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		m, err := parseLoginModule(t, tok)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("Login module not specified in JAAS config")
	}
	return out, nil
}

func parseLoginModule(t *jaasTokenizer, first jaasToken) (LoginModule, error) {
	m := LoginModule{Class: first.text, Options: map[string]string{}}
	flag, err := t.next()
	if err != nil {
		return m, err
	}
	if flag.kind == tokEOF {
		return m, errors.New("Login module control flag not specified in JAAS config")
	}
	switch f := strings.ToUpper(flag.text); f {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		m.Flag = f
	default:
		if !flag.hasText() {
			return m, errors.New("Login module control flag is not available in the JAAS config")
		}
		return m, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", flag.text)
	}
	for {
		key, err := t.next()
		if err != nil {
			return m, err
		}
		if key.kind == tokEOF || key.is(';') {
			if !key.is(';') {
				return m, errors.New("JAAS config entry not terminated by semi-colon")
			}
			return m, nil
		}
		eq, err := t.next()
		if err != nil {
			return m, err
		}
		val, err := t.next()
		if err != nil {
			return m, err
		}
		if !eq.is('=') || val.kind == tokEOF || !val.hasText() {
			return m, fmt.Errorf("Value not specified for key '%s' in JAAS config", key.text)
		}
		m.Options[key.text] = val.text
	}
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // unquoted word
	tokQuoted         // quoted string
	tokNumber         // a number: StreamTokenizer gives it no string value
	tokChar           // any other single character ('=', ';', …)
)

type jaasToken struct {
	kind tokKind
	text string // word or quoted string; the character for tokChar
}

func (t jaasToken) hasText() bool { return t.kind == tokWord || t.kind == tokQuoted }
func (t jaasToken) is(c byte) bool {
	return t.kind == tokChar && len(t.text) == 1 && t.text[0] == c
}

// jaasTokenizer mirrors the StreamTokenizer set-up of Kafka's JaasConfig.
type jaasTokenizer struct {
	s string
	i int
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 128 || c == '-' || c == '_' || c == '$'
}
func isWordPart(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' || c == '.' }

func (t *jaasTokenizer) next() (jaasToken, error) {
	for t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case c <= ' ':
			t.i++
		case strings.HasPrefix(t.s[t.i:], "//"):
			if j := strings.IndexAny(t.s[t.i:], "\r\n"); j >= 0 {
				t.i += j
			} else {
				t.i = len(t.s)
			}
		case strings.HasPrefix(t.s[t.i:], "/*"):
			j := strings.Index(t.s[t.i+2:], "*/")
			if j < 0 {
				t.i = len(t.s)
			} else {
				t.i += j + 4
			}
		case isWordStart(c):
			j := t.i
			for j < len(t.s) && isWordPart(t.s[j]) {
				j++
			}
			w := t.s[t.i:j]
			t.i = j
			return jaasToken{tokWord, w}, nil
		case c >= '0' && c <= '9' || c == '.':
			j := t.i
			for j < len(t.s) && (t.s[j] >= '0' && t.s[j] <= '9' || t.s[j] == '.') {
				j++
			}
			t.i = j
			return jaasToken{kind: tokNumber}, nil
		case c == '"' || c == '\'':
			return t.quoted(c)
		default:
			t.i++
			return jaasToken{tokChar, string(c)}, nil
		}
	}
	return jaasToken{kind: tokEOF}, nil
}

// quoted reads a string up to the closing quote, the end of the line or
// the end of input (StreamTokenizer ends an unterminated string there),
// with Java's escapes (\n \t \b \f \r, octal, and \<any> = <any>).
func (t *jaasTokenizer) quoted(q byte) (jaasToken, error) {
	var b strings.Builder
	t.i++
	for t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case c == q:
			t.i++
			return jaasToken{tokQuoted, b.String()}, nil
		case c == '\n' || c == '\r':
			return jaasToken{tokQuoted, b.String()}, nil
		case c == '\\' && t.i+1 < len(t.s):
			t.i++
			e := t.s[t.i]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte(7)
			case 'v':
				b.WriteByte(11)
			default:
				if e >= '0' && e <= '7' {
					n, k := 0, 0
					for k < 3 && t.i < len(t.s) && t.s[t.i] >= '0' && t.s[t.i] <= '7' && (k < 2 || e <= '3') {
						n = n*8 + int(t.s[t.i]-'0')
						t.i++
						k++
					}
					b.WriteByte(byte(n))
					continue
				}
				b.WriteByte(e)
			}
			t.i++
		default:
			b.WriteByte(c)
			t.i++
		}
	}
	return jaasToken{tokQuoted, b.String()}, nil
}

// PlainUsers returns the user_<name>="<password>" options of a
// PlainLoginModule entry (PlainServerCallbackHandler's user table).
func (m LoginModule) PlainUsers() map[string]string {
	users := map[string]string{}
	for k, v := range m.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			users[name] = v
		}
	}
	return users
}

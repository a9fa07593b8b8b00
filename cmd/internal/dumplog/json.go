package dumplog

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// jsonObject builds one JSON object with its fields in the order they are
// added, formatted as Kafka's tools print a Jackson ObjectNode (the
// generated *JsonConverter classes fill one in schema order): no spaces,
// numbers in decimal, bytes as standard padded base64, null for a null
// nullable string or bytes field.
type jsonObject struct {
	buf  []byte
	open bool
}

func (o *jsonObject) name(n string) {
	if o.open {
		o.buf = append(o.buf, ',')
	} else {
		o.buf = append(o.buf, '{')
		o.open = true
	}
	o.buf = appendJSONString(o.buf, n)
	o.buf = append(o.buf, ':')
}

func (o *jsonObject) str(n, v string) {
	o.name(n)
	o.buf = appendJSONString(o.buf, v)
}

func (o *jsonObject) nullableStr(n string, v *string) {
	if v == nil {
		o.raw(n, []byte("null"))
		return
	}
	o.str(n, *v)
}

func (o *jsonObject) int(n string, v int64) {
	o.name(n)
	o.buf = strconv.AppendInt(o.buf, v, 10)
}

// bytes writes a non-nullable bytes field.
func (o *jsonObject) bytes(n string, v []byte) {
	o.name(n)
	o.buf = append(o.buf, '"')
	o.buf = base64.StdEncoding.AppendEncode(o.buf, v)
	o.buf = append(o.buf, '"')
}

// nullableBytes writes a nullable bytes field: nil is null.
func (o *jsonObject) nullableBytes(n string, v []byte) {
	if v == nil {
		o.raw(n, []byte("null"))
		return
	}
	o.bytes(n, v)
}

// raw writes a field whose value is already JSON.
func (o *jsonObject) raw(n string, v []byte) {
	o.name(n)
	o.buf = append(o.buf, v...)
}

// done returns the finished object ("{}" when it has no fields).
func (o *jsonObject) done() []byte {
	if !o.open {
		return append(o.buf, '{', '}')
	}
	return append(o.buf, '}')
}

// appendJSONArray appends "[e0,e1,…]" with each element written by elem.
func appendJSONArray(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

func appendInt32Array(b []byte, v []int32) []byte {
	return appendJSONArray(b, len(v), func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(v[i]), 10) })
}

func appendStringArray(b []byte, v []string) []byte {
	return appendJSONArray(b, len(v), func(b []byte, i int) []byte { return appendJSONString(b, v[i]) })
}

const hexDigits = "0123456789ABCDEF"

// appendJSONString appends s quoted as Jackson writes it: '"' and '\'
// escaped, the control characters below U+0020 as \b \t \n \f \r or
// \u00XX (upper-case hex), everything else (non-ASCII, U+2028, '<', '&'
// included) as is. Kafka decodes protocol strings from UTF-8 with
// replacement, so each ill-formed byte sequence (its maximal subpart, as
// Java's decoder takes it) becomes one U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size > 1 {
				b = append(b, s[i:i+size]...)
				i += size
				continue
			}
			b = append(b, "\uFFFD"...)
			i += illFormedLen(s[i:])
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

// illFormedLen is the length of the maximal subpart of the ill-formed
// UTF-8 sequence at the start of s: a lead byte and as many of the
// continuation bytes it allows as follow it (at least 1).
func illFormedLen(s string) int {
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	if len(s) > 1 && s[1] >= lo && s[1] <= hi {
		n = 2
		for n <= need && n < len(s) && s[n] >= 0x80 && s[n] <= 0xBF {
			n++
		}
	}
	return n
}

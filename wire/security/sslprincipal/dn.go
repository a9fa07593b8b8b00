package sslprincipal

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// rfc2253Keywords are the attribute type names Java's X500Principal
// getName() (RFC 2253 form) writes; every other attribute type is written
// as its dotted OID with a '#'-hex DER value.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// DN renders a certificate's subject as Java's X500Principal.getName()
// does (RFC 2253): relative distinguished names from the most specific
// (the last in the certificate) to the least, "," between them, "+"
// between the values of a multi-valued one; string values escaped with
// '\' (",", "=", "+", "<", ">", "#", ";", '"', '\', and a leading or
// trailing space); values of keyword-less types, and non-string values,
// as #hex of their DER encoding. This is the name Kafka's
// DefaultKafkaPrincipalBuilder gives ssl.principal.mapping.rules.
// Errors: a subject that is not a valid DER Name.
func DN(cert *x509.Certificate) (string, error) {
	var seq pkix.RDNSequence
	rest, err := asn1.Unmarshal(cert.RawSubject, &seq)
	if err != nil {
		return "", fmt.Errorf("certificate subject: %w", err)
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("certificate subject: %d trailing bytes", len(rest))
	}
	// The raw values (for #hex) come from a second decoding into
	// asn1.RawValue: pkix.AttributeTypeAndValue's Value loses the tag.
	var raw []asn1.RawValue // one SET per RDN
	if _, err := asn1.Unmarshal(cert.RawSubject, &raw); err != nil {
		return "", fmt.Errorf("certificate subject: %w", err)
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i != len(seq)-1 {
			b.WriteByte(',')
		}
		atvs, err := rawATVs(raw[i])
		if err != nil {
			return "", err
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeATV(&b, atv, atvs[j])
		}
	}
	return b.String(), nil
}

type rawATV struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rawATVs decodes one RDN's SET OF AttributeTypeAndValue keeping each
// value's tag and DER bytes.
func rawATVs(set asn1.RawValue) ([]rawATV, error) {
	var out []rawATV
	rest := set.Bytes
	for len(rest) > 0 {
		var a rawATV
		var err error
		if rest, err = asn1.Unmarshal(rest, &a); err != nil {
			return nil, fmt.Errorf("certificate subject attribute: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// String types Java renders as text (DerValue.isDerString, plus IA5String).
var stringTags = map[int]bool{
	asn1.TagPrintableString: true, asn1.TagT61String: true, asn1.TagIA5String: true,
	asn1.TagUTF8String: true, asn1.TagBMPString: true, 28 /* UniversalString */ : true,
	26 /* VisibleString */ : true, 27 /* GeneralString */ : true,
}

func writeATV(b *strings.Builder, atv pkix.AttributeTypeAndValue, r rawATV) {
	kw, known := rfc2253Keywords[atv.Type.String()]
	s, isString := atv.Value.(string)
	if !known || !isString || r.Value.Class != asn1.ClassUniversal || !stringTags[r.Value.Tag] {
		if known {
			b.WriteString(kw)
		} else {
			b.WriteString(atv.Type.String())
		}
		b.WriteString("=#")
		b.WriteString(hex.EncodeToString(r.Value.FullBytes)) // lower case, as Java's Character.forDigit
		return
	}
	b.WriteString(kw)
	b.WriteByte('=')
	b.WriteString(escape(s))
}

// escape escapes an attribute value as Java's AVA.toRFC2253String.
func escape(s string) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case strings.ContainsRune(",=+<>#;\"\\", c):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == 0:
			b.WriteString("\\00")
		case c == ' ' && (i == 0 || i+utf8.RuneLen(c) == len(s)):
			b.WriteString("\\ ")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

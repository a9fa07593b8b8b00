// Package keystore loads TLS key and trust material from the keystore
// formats Kafka's DefaultSslEngineFactory reads: PKCS12, JKS (through
// maintained libraries, not parsers of our own) and PEM (KIP-651: files, or
// the certificate chain, key and trusted certificates given inline in the
// config). The broker's listeners, its inter-broker clients, the admin
// listener and every client tool build their tls.Config from these.
package keystore

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	jks "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// The keystore types of ssl.keystore.type / ssl.truststore.type.
const (
	TypeJKS    = "JKS"    // Kafka's default for both
	TypePKCS12 = "PKCS12" // also accepted as "P12"
	TypePEM    = "PEM"    // KIP-651
)

// KeyStore is where a TLS certificate chain and its private key come from:
// Kafka's ssl.keystore.type, ssl.keystore.location, ssl.keystore.password,
// ssl.key.password, and for PEM ssl.keystore.certificate.chain and
// ssl.keystore.key (inline PEM, instead of a location).
type KeyStore struct {
	Type             string // JKS (default when empty), PKCS12 or PEM
	Location         string // file path; "" with PEM = the inline fields
	Password         string // store password (JKS, PKCS12); unused for PEM
	KeyPassword      string // JKS: the key entry's password (default Password); PEM: unsupported for now (encrypted keys are refused)
	CertificateChain string // PEM only, inline: the certificate chain, leaf first
	Key              string // PEM only, inline: the PKCS#8 (or PKCS#1 / SEC 1) private key
}

// TrustStore is where the certificates that verify peers come from:
// ssl.truststore.type, ssl.truststore.location, ssl.truststore.password,
// and for PEM ssl.truststore.certificates (inline).
type TrustStore struct {
	Type         string // JKS (default when empty), PKCS12 or PEM
	Location     string // file path; "" with PEM = Certificates
	Password     string // store password (JKS: optional; PKCS12)
	Certificates string // PEM only, inline
}

// IsSet reports whether k names any key material (a location or an inline key).
func (k KeyStore) IsSet() bool { return k.Location != "" || k.Key != "" || k.CertificateChain != "" }

// IsSet reports whether t names any trust material.
func (t TrustStore) IsSet() bool { return t.Location != "" || t.Certificates != "" }

// NormalizeType returns the canonical name of a keystore type (case-
// insensitive; "" = JKS, Kafka's default). Errors: an unknown type.
func NormalizeType(t string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(t)) {
	case "", TypeJKS:
		return TypeJKS, nil
	case TypePKCS12, "P12", "PFX":
		return TypePKCS12, nil
	case TypePEM:
		return TypePEM, nil
	}
	return "", fmt.Errorf("keystore type %q is not supported (JKS, PKCS12 or PEM)", t)
}

// Load reads the certificate chain and private key. Errors name the file
// and what is wrong with it (wrong password, no private key entry, a key
// that does not match the certificate, …).
func (k KeyStore) Load() (tls.Certificate, error) {
	typ, err := NormalizeType(k.Type)
	if err != nil {
		return tls.Certificate{}, err
	}
	if typ != TypePEM && (k.CertificateChain != "" || k.Key != "") {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM, not %s", typ)
	}
	var cert tls.Certificate
	switch typ {
	case TypePEM:
		cert, err = k.loadPEM()
	case TypePKCS12:
		cert, err = k.loadPKCS12()
	default:
		cert, err = k.loadJKS()
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	if len(cert.Certificate) == 0 {
		return tls.Certificate{}, fmt.Errorf("keystore %s holds no certificate", k.where())
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("keystore %s: %w", k.where(), err)
	}
	cert.Leaf = leaf
	if err := keyMatches(leaf, cert.PrivateKey); err != nil {
		return tls.Certificate{}, fmt.Errorf("keystore %s: %w", k.where(), err)
	}
	return cert, nil
}

func (k KeyStore) where() string {
	if k.Location != "" {
		return k.Location
	}
	return "(inline ssl.keystore.key)"
}

func (k KeyStore) loadPEM() (tls.Certificate, error) {
	chain, key := []byte(k.CertificateChain), []byte(k.Key)
	if k.Location != "" {
		if k.Key != "" || k.CertificateChain != "" {
			return tls.Certificate{}, errors.New("ssl.keystore.location and the inline ssl.keystore.key / ssl.keystore.certificate.chain are exclusive")
		}
		data, err := os.ReadFile(k.Location)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("reading keystore: %w", err)
		}
		// A PEM keystore file holds the key and the chain (KIP-651).
		chain, key = data, data
	} else if k.Key == "" || k.CertificateChain == "" {
		return tls.Certificate{}, errors.New("a PEM keystore given inline needs both ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	var certs [][]byte
	for _, b := range pemBlocks(chain) {
		if b.Type == "CERTIFICATE" {
			certs = append(certs, b.Bytes)
		}
	}
	if len(certs) == 0 {
		return tls.Certificate{}, fmt.Errorf("keystore %s: no CERTIFICATE in the PEM certificate chain", k.where())
	}
	var priv crypto.PrivateKey
	for _, b := range pemBlocks(key) {
		if b.Type == "ENCRYPTED PRIVATE KEY" {
			return tls.Certificate{}, fmt.Errorf("keystore %s: encrypted PEM private keys are not supported yet; store the key unencrypted (PKCS#8) or use a PKCS12 keystore", k.where())
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			p, err := parseKey(b.Bytes)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("keystore %s: %w", k.where(), err)
			}
			priv = p
			break
		}
	}
	if priv == nil {
		return tls.Certificate{}, fmt.Errorf("keystore %s: no PRIVATE KEY in the PEM key", k.where())
	}
	return tls.Certificate{Certificate: certs, PrivateKey: priv}, nil
}

func (k KeyStore) loadPKCS12() (tls.Certificate, error) {
	data, err := os.ReadFile(k.Location)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading keystore: %w", err)
	}
	priv, leaf, cas, err := pkcs12.DecodeChain(data, k.Password)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("keystore %s (PKCS12): %w (wrong ssl.keystore.password?)", k.Location, err)
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: priv}
	for _, c := range cas {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

func (k KeyStore) loadJKS() (tls.Certificate, error) {
	ks, err := readJKS(k.Location, k.Password)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPass := k.KeyPassword
	if keyPass == "" {
		keyPass = k.Password
	}
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPass))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("keystore %s (JKS), key %q: %w (wrong ssl.key.password?)", k.Location, alias, err)
		}
		priv, err := parseKey(e.PrivateKey)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("keystore %s (JKS), key %q: %w", k.Location, alias, err)
		}
		cert := tls.Certificate{PrivateKey: priv}
		for _, c := range e.CertificateChain {
			cert.Certificate = append(cert.Certificate, c.Content)
		}
		return cert, nil
	}
	return tls.Certificate{}, fmt.Errorf("keystore %s (JKS) holds no private key entry", k.Location)
}

// Load reads the trusted certificates into a pool (and the list, for
// tools that print them). Errors name the file.
func (t TrustStore) Load() (*x509.CertPool, []*x509.Certificate, error) {
	typ, err := NormalizeType(t.Type)
	if err != nil {
		return nil, nil, err
	}
	if typ != TypePEM && t.Certificates != "" {
		return nil, nil, fmt.Errorf("ssl.truststore.certificates needs ssl.truststore.type=PEM, not %s", typ)
	}
	var certs []*x509.Certificate
	switch typ {
	case TypePEM:
		data := []byte(t.Certificates)
		if t.Location != "" {
			if t.Certificates != "" {
				return nil, nil, errors.New("ssl.truststore.location and ssl.truststore.certificates are exclusive")
			}
			if data, err = os.ReadFile(t.Location); err != nil {
				return nil, nil, fmt.Errorf("reading truststore: %w", err)
			}
		}
		for _, b := range pemBlocks(data) {
			if b.Type != "CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("truststore %s: %w", t.where(), err)
			}
			certs = append(certs, c)
		}
	case TypePKCS12:
		data, err := os.ReadFile(t.Location)
		if err != nil {
			return nil, nil, fmt.Errorf("reading truststore: %w", err)
		}
		if certs, err = pkcs12.DecodeTrustStore(data, t.Password); err != nil {
			return nil, nil, fmt.Errorf("truststore %s (PKCS12): %w (wrong ssl.truststore.password?)", t.Location, err)
		}
	default:
		ks, err := readJKS(t.Location, t.Password)
		if err != nil {
			return nil, nil, err
		}
		for _, alias := range ks.Aliases() {
			var raw []jks.Certificate
			if ks.IsTrustedCertificateEntry(alias) {
				e, err := ks.GetTrustedCertificateEntry(alias)
				if err != nil {
					return nil, nil, fmt.Errorf("truststore %s (JKS), %q: %w", t.Location, alias, err)
				}
				raw = []jks.Certificate{e.Certificate}
			} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil {
				raw = chain // Java trusts a key entry's chain too
			}
			for _, r := range raw {
				c, err := x509.ParseCertificate(r.Content)
				if err != nil {
					return nil, nil, fmt.Errorf("truststore %s (JKS), %q: %w", t.Location, alias, err)
				}
				certs = append(certs, c)
			}
		}
	}
	if len(certs) == 0 {
		return nil, nil, fmt.Errorf("truststore %s holds no certificate", t.where())
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, certs, nil
}

func (t TrustStore) where() string {
	if t.Location != "" {
		return t.Location
	}
	return "(inline ssl.truststore.certificates)"
}

// readJKS opens a JKS store. A JKS truststore may have no password (Java
// then skips the integrity check); keystore-go needs one, so an empty
// password is reported as such.
func readJKS(path, password string) (jks.KeyStore, error) {
	f, err := os.Open(path)
	if err != nil {
		return jks.KeyStore{}, fmt.Errorf("reading keystore: %w", err)
	}
	defer f.Close()
	ks := jks.New()
	if err := ks.Load(f, []byte(password)); err != nil {
		return jks.KeyStore{}, fmt.Errorf("keystore %s (JKS): %w (wrong password, or not a JKS file?)", path, err)
	}
	return ks, nil
}

func pemBlocks(data []byte) []*pem.Block {
	var out []*pem.Block
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		out = append(out, b)
	}
}

// parseKey parses a DER private key: PKCS#8 (what JKS, PKCS12 and KIP-651
// PEM hold), or PKCS#1 RSA / SEC 1 EC as openssl writes them.
func parseKey(der []byte) (crypto.PrivateKey, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("private key is not PKCS#8, PKCS#1 or SEC 1 DER")
}

// keyMatches checks that priv is the private key of leaf's public key.
func keyMatches(leaf *x509.Certificate, priv crypto.PrivateKey) error {
	type publicKeyer interface{ Public() crypto.PublicKey }
	pk, ok := priv.(publicKeyer)
	if !ok {
		return errors.New("unsupported private key type")
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if e, ok := pk.Public().(equaler); !ok || !e.Equal(leaf.PublicKey) {
		return errors.New("the private key does not match the certificate's public key")
	}
	return nil
}

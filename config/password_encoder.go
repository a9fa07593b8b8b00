package config

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// PasswordEncoder encrypts the password configs a broker stores in
// /config/brokers (dynamic keystore passwords), as Kafka's
// EncryptingPasswordEncoder: a key derived from the secret with PBKDF2
// over a random 256-byte salt, AES/CBC/PKCS5Padding with a random IV, the
// result stored as "keyFactoryAlgorithm:…,cipherAlgorithm:…,keyLength:…,
// iterations:…,salt:…,initializationVector:…,passwordLength:…,
// encryptedPassword:…" (base64 fields). Every broker of a cluster needs
// the same secret to read the others' values.
type PasswordEncoder struct {
	Secret              string // password.encoder.secret; "" = password configs cannot be stored
	OldSecret           string // password.encoder.old.secret: values it encoded are still read
	KeyFactoryAlgorithm string // password.encoder.keyfactory.algorithm; "" = PBKDF2WithHmacSHA512
	CipherAlgorithm     string // password.encoder.cipher.algorithm, AES/CBC/PKCS5Padding (the one supported)
	KeyLength           int    // password.encoder.key.length in bits, 128 (AES: 128, 192 or 256)
	Iterations          int    // password.encoder.iterations, 4096 (at least 1024)
}

// ErrNoPasswordEncoder is Kafka's refusal to store a password config
// without password.encoder.secret.
var ErrNoPasswordEncoder = errors.New("Password encoder secret not configured")

const cbcCipher = "AES/CBC/PKCS5Padding"

func defaultPasswordEncoder() PasswordEncoder {
	return PasswordEncoder{CipherAlgorithm: cbcCipher, KeyLength: 128, Iterations: 4096}
}

var passwordEncoderKeys = map[string]brokerKey{
	"password.encoder.secret":     nullKey(func(b *Broker, _, v string) error { b.PasswordEncoder.Secret = v; return nil }, kmsg.ConfigTypePassword),
	"password.encoder.old.secret": nullKey(func(b *Broker, _, v string) error { b.PasswordEncoder.OldSecret = v; return nil }, kmsg.ConfigTypePassword),
	"password.encoder.keyfactory.algorithm": nullKey(func(b *Broker, key, v string) error {
		if _, err := pbkdf2Hash(v); err != nil {
			return invalid(key, v, "%v", err)
		}
		b.PasswordEncoder.KeyFactoryAlgorithm = v
		return nil
	}, kmsg.ConfigTypeString),
	"password.encoder.cipher.algorithm": checkKey(func(b *Broker, key, v string) error {
		if v != cbcCipher {
			return invalid(key, v, "only %s is supported", cbcCipher)
		}
		b.PasswordEncoder.CipherAlgorithm = v
		return nil
	}, kmsg.ConfigTypeString, cbcCipher),
	"password.encoder.key.length": checkKey(func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 32, 8)
		if err != nil {
			return err
		}
		if n != 128 && n != 192 && n != 256 {
			return invalid(key, v, "AES keys are 128, 192 or 256 bits")
		}
		b.PasswordEncoder.KeyLength = int(n)
		return nil
	}, kmsg.ConfigTypeInt, "128"),
	"password.encoder.iterations": intKey(func(b *Broker) *int { return &b.PasswordEncoder.Iterations }, 32, 1024),
}

func init() {
	for k, v := range passwordEncoderKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

func pbkdf2Hash(alg string) (func() hash.Hash, error) {
	switch alg {
	case "", "PBKDF2WithHmacSHA512":
		return sha512.New, nil
	case "PBKDF2WithHmacSHA1":
		return sha1.New, nil
	}
	return nil, fmt.Errorf("key factory %s is not supported (PBKDF2WithHmacSHA512 or PBKDF2WithHmacSHA1)", alg)
}

func (p PasswordEncoder) key(secret, alg string, salt []byte, iterations, bits int) ([]byte, error) {
	h, err := pbkdf2Hash(alg)
	if err != nil {
		return nil, err
	}
	return pbkdf2.Key(h, secret, salt, iterations, bits/8)
}

// Encode encrypts password. Errors: ErrNoPasswordEncoder.
func (p PasswordEncoder) Encode(password string) (string, error) {
	if p.Secret == "" {
		return "", ErrNoPasswordEncoder
	}
	alg := p.KeyFactoryAlgorithm
	if alg == "" {
		alg = "PBKDF2WithHmacSHA512"
	}
	salt := make([]byte, 256)
	iv := make([]byte, aes.BlockSize)
	rand.Read(salt)
	rand.Read(iv)
	k, err := p.key(p.Secret, alg, salt, p.Iterations, p.KeyLength)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return "", err
	}
	plain := []byte(password)
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	for range pad {
		plain = append(plain, byte(pad))
	}
	out := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, plain)
	b64 := base64.StdEncoding.EncodeToString
	return strings.Join([]string{
		"keyFactoryAlgorithm:" + alg, "cipherAlgorithm:" + cbcCipher,
		"keyLength:" + strconv.Itoa(p.KeyLength), "iterations:" + strconv.Itoa(p.Iterations),
		"salt:" + b64(salt), "initializationVector:" + b64(iv),
		"passwordLength:" + strconv.Itoa(utf16Len(password)), "encryptedPassword:" + b64(out),
	}, ","), nil
}

// utf16Len is Java's String.length, which Kafka's sanity check compares.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Decode decrypts a value Encode (or Kafka) wrote, with the secret, else
// the old secret. Errors: no secret, a malformed value, or Kafka's
// "Password could not be decoded".
func (p PasswordEncoder) Decode(encoded string) (string, error) {
	if p.Secret == "" && p.OldSecret == "" {
		return "", ErrNoPasswordEncoder
	}
	params := map[string]string{}
	for _, kv := range strings.Split(encoded, ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			return "", errors.New("Password could not be decoded: not an encoded password")
		}
		params[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if c := params["cipherAlgorithm"]; c != cbcCipher {
		return "", fmt.Errorf("Password could not be decoded: cipher %q is not supported", c)
	}
	bits, err1 := strconv.Atoi(params["keyLength"])
	iters, err2 := strconv.Atoi(params["iterations"])
	length, err3 := strconv.Atoi(params["passwordLength"])
	salt, err4 := base64.StdEncoding.DecodeString(params["salt"])
	iv, err5 := base64.StdEncoding.DecodeString(params["initializationVector"])
	data, err6 := base64.StdEncoding.DecodeString(params["encryptedPassword"])
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil || len(iv) != aes.BlockSize || len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return "", errors.New("Password could not be decoded: malformed value")
	}
	for _, secret := range []string{p.Secret, p.OldSecret} {
		if secret == "" {
			continue
		}
		k, err := p.key(secret, params["keyFactoryAlgorithm"], salt, iters, bits)
		if err != nil {
			return "", fmt.Errorf("Password could not be decoded: %w", err)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return "", fmt.Errorf("Password could not be decoded: %w", err)
		}
		plain := make([]byte, len(data))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
		pad := int(plain[len(plain)-1])
		if pad == 0 || pad > aes.BlockSize || pad > len(plain) {
			continue // the wrong secret, most likely
		}
		plain = plain[:len(plain)-pad]
		if utf8.Valid(plain) && utf16Len(string(plain)) == length {
			return string(plain), nil
		}
	}
	return "", errors.New("Password could not be decoded, sanity check of length failed")
}

// IsPasswordConfig reports whether a broker key holds a password (Kafka's
// PASSWORD type): ssl.keystore.password, ssl.key.password,
// ssl.truststore.password, sasl.jaas.config and their listener-prefixed
// forms.
func IsPasswordConfig(name string) bool {
	if m := listenerPrefixRE.FindStringSubmatch(name); m != nil {
		name = m[2]
	}
	bk, ok := brokerKeys[name]
	return ok && bk.typ == kmsg.ConfigTypePassword
}

// EncodePasswords returns props with every password config encrypted.
func (p PasswordEncoder) EncodePasswords(props map[string]string) (map[string]string, error) {
	out := maps.Clone(props)
	for k, v := range props {
		if IsPasswordConfig(k) {
			enc, err := p.Encode(v)
			if err != nil {
				return nil, err
			}
			out[k] = enc
		}
	}
	return out, nil
}

// DecodePasswords returns props with every password config decrypted;
// bad lists the keys that could not be (left out of the result).
func (p PasswordEncoder) DecodePasswords(props map[string]string) (out map[string]string, bad map[string]error) {
	out = maps.Clone(props)
	for k, v := range props {
		if !IsPasswordConfig(k) {
			continue
		}
		plain, err := p.Decode(v)
		if err != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[k] = err
			delete(out, k)
			continue
		}
		out[k] = plain
	}
	return out, bad
}

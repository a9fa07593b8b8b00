package config

import (
	"errors"
	"strings"
	"testing"
)

// kafkaEncoded is "keystore-pässword" encrypted with secret "s3cret" by
// the JDK's PBKDF2WithHmacSHA512 and AES/CBC/PKCS5Padding, as Kafka's
// EncryptingPasswordEncoder does (fields in another order, as a Java
// HashMap prints them).
const kafkaEncoded = "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5Padding,keyLength:128,salt:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==,iterations:4096,encryptedPassword:D+vBmgwJvgcN3zu1FHZwczNmCLqTCaCeAMuobmJHEi4=,passwordLength:17,initializationVector:huJusc6KAZxqc/lxih3eNQ=="

func TestPasswordEncoderReadsKafkasFormat(t *testing.T) {
	p := defaultPasswordEncoder()
	p.Secret = "s3cret"
	got, err := p.Decode(kafkaEncoded)
	if err != nil || got != "keystore-pässword" {
		t.Fatalf("Decode = %q, %v", got, err)
	}
	p.Secret = "wrong"
	if _, err := p.Decode(kafkaEncoded); err == nil {
		t.Fatal("decoded with the wrong secret")
	}
	p.OldSecret = "s3cret" // rotated: the old secret still reads it
	if got, err := p.Decode(kafkaEncoded); err != nil || got != "keystore-pässword" {
		t.Fatalf("with the old secret: %q, %v", got, err)
	}
}

func TestPasswordEncoderRoundTrip(t *testing.T) {
	p := defaultPasswordEncoder()
	if _, err := p.Encode("x"); !errors.Is(err, ErrNoPasswordEncoder) {
		t.Fatalf("without a secret: %v", err)
	}
	p.Secret = "another"
	enc, err := p.Encode("pw")
	if err != nil || strings.Contains(enc, "pw,") || !strings.Contains(enc, "cipherAlgorithm:AES/CBC/PKCS5Padding") {
		t.Fatalf("Encode = %q, %v", enc, err)
	}
	if dec, err := p.Decode(enc); err != nil || dec != "pw" {
		t.Fatalf("round trip %q, %v", dec, err)
	}
	props, err := p.EncodePasswords(map[string]string{"listener.name.ssl.ssl.keystore.password": "k", "listener.name.ssl.ssl.keystore.location": "/x"})
	if err != nil || props["listener.name.ssl.ssl.keystore.location"] != "/x" || props["listener.name.ssl.ssl.keystore.password"] == "k" {
		t.Fatalf("EncodePasswords %v %v", props, err)
	}
	back, bad := p.DecodePasswords(props)
	if len(bad) != 0 || back["listener.name.ssl.ssl.keystore.password"] != "k" {
		t.Fatalf("DecodePasswords %v %v", back, bad)
	}
}

package consoleproducer

import "strings"

// BareCodecValue resolves `--compression-codec WORD` (space separated).
// Kafka's option parser (joptsimple) gives an option with an optional
// argument the next word as its value when that word is not an option;
// pflag instead takes the bare flag's default (gzip) and leaves WORD as a
// positional argument. raw is the command line as typed (after the
// subcommand name), leftover the positional arguments pflag left. It
// returns the codec WORD and leftover without it, with ok true, when the
// last --compression-codec in raw was bare and followed by such a word;
// the codec is not validated here, so "brotli" meets the same error as
// --compression-codec=brotli.
func BareCodecValue(raw, leftover []string) (codec string, rest []string, ok bool) {
	idx := -1
	for i, a := range raw {
		if a == "--" {
			break
		}
		if a == "--compression-codec" || strings.HasPrefix(a, "--compression-codec=") {
			idx = i
		}
	}
	if idx < 0 || raw[idx] != "--compression-codec" || idx+1 >= len(raw) || strings.HasPrefix(raw[idx+1], "-") {
		return "", leftover, false
	}
	word := raw[idx+1]
	for j, a := range leftover {
		if a == word {
			rest = append(append([]string{}, leftover[:j]...), leftover[j+1:]...)
			return word, rest, true
		}
	}
	return "", leftover, false
}

package tokenize

import "unicode/utf8"

// byteToRune is GPT-2's byte-to-unicode table: printable bytes map to
// themselves, the others to U+0100 upwards in byte order, so that every
// byte-level token is printable text in tokenizer.json.
var byteToRune [256]rune

// runeToByte inverts byteToRune: runeToByte[r] is the byte of r, or -1
// for a rune outside the byte alphabet (all of which are below 0x144).
var runeToByte [0x144]int16

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = int16(b)
	}
}

// appendByteLevelDecode appends to dst the bytes the byte-level token
// string tok stands for; ok is false (and dst's extension garbage) if a
// character is outside the byte alphabet.
func appendByteLevelDecode(dst, tok []byte) (out []byte, ok bool) {
	for i := 0; i < len(tok); {
		r, n := rune(tok[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(tok[i:])
		}
		if r >= rune(len(runeToByte)) || runeToByte[r] < 0 {
			return dst, false
		}
		dst = append(dst, byte(runeToByte[r]))
		i += n
	}
	return dst, true
}

// byteLevelEncode maps raw bytes to their byte-level token string.
func byteLevelEncode(raw string) string {
	buf := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		buf = utf8.AppendRune(buf, byteToRune[raw[i]])
	}
	return string(buf)
}

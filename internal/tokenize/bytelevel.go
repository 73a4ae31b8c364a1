package tokenize

import "unicode/utf8"

// byteToRune is GPT-2's byte-to-unicode table: printable bytes map to
// themselves, the others to U+0100 upwards in byte order, so that every
// byte-level token is printable text in tokenizer.json.
var byteToRune [256]rune

// runeToByte inverts byteToRune.
var runeToByte = map[rune]byte{}

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelDecode turns a byte-level token string back into the bytes it
// stands for; ok is false if a character is outside the byte alphabet.
func byteLevelDecode(tok string) (out []byte, ok bool) {
	out = make([]byte, 0, len(tok))
	for _, r := range tok {
		b, in := runeToByte[r]
		if !in {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// byteLevelEncode maps raw bytes to their byte-level token string.
func byteLevelEncode(raw string) string {
	buf := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		buf = utf8.AppendRune(buf, byteToRune[raw[i]])
	}
	return string(buf)
}

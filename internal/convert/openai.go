package convert

import (
	"fmt"
	"strings"
)

// parts decodes OpenAI content parts: an array of objects whose "text"
// (for parts of type "text", "input_text" or "output_text", or with no
// type) is kept and joined with "\n"; other parts (image_url,
// input_audio, ...) carry nothing a text replay can send and are skipped.
func (d *decoder) parts(key string) (string, error) {
	sc := &d.sc
	var texts []string
	err := sc.array(func(i int) error {
		if k := sc.kind(); k != "object" {
			return fmt.Errorf("%s[%d]: expected object, got JSON %s", key, i, k)
		}
		var typ, text string
		var haveText bool
		err := sc.object(func(k []byte) error {
			switch string(k) {
			case "type":
				if sc.kind() != "string" {
					return fmt.Errorf("%s[%d].type: expected string, got JSON %s", key, i, sc.kind())
				}
				t, err := sc.str()
				typ = t
				return err
			case "text":
				if null, err := sc.isNull(); null || err != nil {
					return err
				}
				if sc.kind() != "string" {
					return fmt.Errorf("%s[%d].text: expected string, got JSON %s", key, i, sc.kind())
				}
				t, err := sc.str()
				text, haveText = t, true
				return err
			}
			return sc.skip()
		})
		if err != nil {
			return err
		}
		switch typ {
		case "", "text", "input_text", "output_text":
			if haveText {
				texts = append(texts, text)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return strings.Join(texts, "\n"), nil
}

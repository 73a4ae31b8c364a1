package openai

import "testing"

func TestToolChoice(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"": "", "auto": `"auto"`, "required": `"required"`, "none": `"none"`,
		"get_weather": `{"function":{"name":"get_weather"},"type":"function"}`,
		`a"b`:         `{"function":{"name":"a\"b"},"type":"function"}`,
	} {
		if got := string(ToolChoice(v)); got != want {
			t.Errorf("ToolChoice(%q) = %s, want %s", v, got, want)
		}
	}
}

package openai

import (
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://h:8000":      "http://h:8000/v1",
		"http://h:8000/":     "http://h:8000/v1",
		"http://h:8000/v1":   "http://h:8000/v1",
		"http://h:8000/v1/":  "http://h:8000/v1",
		"https://h/proxy/v1": "https://h/proxy/v1",
		"https://h/proxy":    "https://h/proxy/v1",
	} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"error":{"message":"no such model","type":"x"}}`, "no such model"},
		{`{"error":"plain string"}`, "plain string"},
		{"  gateway timeout \n", "gateway timeout"},
		{strings.Repeat("a", 400), strings.Repeat("a", 300) + "..."},
	} {
		if got := ErrorMessage([]byte(tc.in)); got != tc.want {
			t.Errorf("ErrorMessage(%.30q) = %.40q, want %.40q", tc.in, got, tc.want)
		}
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	for api, want := range map[API]string{APIChat: "/chat/completions", "": "/chat/completions", APICompletions: "/completions"} {
		if got := api.Path(); got != want {
			t.Errorf("API(%q).Path() = %q, want %q", api, got, want)
		}
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	got, err := Models([]byte(`{"object":"list","data":[{"id":"a","max_model_len":4096,"owned_by":"x"},{"id":"b"}]}`))
	if err != nil || len(got) != 2 || got[0] != (ModelInfo{ID: "a", MaxModelLen: 4096}) || got[1] != (ModelInfo{ID: "b"}) {
		t.Errorf("Models = %+v, %v", got, err)
	}
	if _, err := Models([]byte(`<html>`)); err == nil {
		t.Error("Models(<html>): no error")
	}
}

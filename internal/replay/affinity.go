package replay

import (
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
)

// HeaderTemplate is a header sent with every request of a session. Its
// value may hold {conversation_id}, {run_id} and {user}, replaced by the
// session's id (as recorded), the run id and the user (client) number.
type HeaderTemplate struct {
	Name, Value string
}

// ParseHeaderTemplate parses "Name: template".
func ParseHeaderTemplate(s string) (HeaderTemplate, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || value == "" || strings.ContainsAny(name, " \t") {
		return HeaderTemplate{}, fmt.Errorf("%q is not \"Name: template\"", s)
	}
	for rest := value; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return HeaderTemplate{}, fmt.Errorf("%q: unclosed {", s)
		}
		switch rest[i : i+j+1] {
		case "{conversation_id}", "{run_id}", "{user}":
		default:
			return HeaderTemplate{}, fmt.Errorf("%q: %s is not {conversation_id}, {run_id} or {user}", s, rest[i:i+j+1])
		}
		rest = rest[i+j+1:]
	}
	return HeaderTemplate{Name: textproto.CanonicalMIMEHeaderKey(name), Value: value}, nil
}

// expand returns the template's value for a session.
func (t HeaderTemplate) expand(id, runID string, user int) string {
	return strings.NewReplacer("{conversation_id}", id, "{run_id}", runID, "{user}", strconv.Itoa(user)).Replace(t.Value)
}

// affinity is what a session sends back to keep its route: the router's
// session tokens (response headers named by Options.SessionTokens) and
// cookies (Options.SessionCookies).
type affinity struct {
	tokens  http.Header
	cookies map[string]string
}

// sessionHeaders returns the headers of the next request of s that name
// its session or keep its route; nil when there are none.
func (o *Options) sessionHeaders(s *session) http.Header {
	if !o.SendSessionHeader && len(o.SessionHeaders) == 0 && len(s.aff.tokens) == 0 && len(s.aff.cookies) == 0 {
		return nil
	}
	h := http.Header{}
	if o.SendSessionHeader {
		h.Set("X-Session-ID", s.id)
	}
	for _, t := range o.SessionHeaders {
		h.Set(t.Name, t.expand(s.id, o.RunID, s.client))
	}
	for k, v := range s.aff.tokens {
		h[k] = v
	}
	if len(s.aff.cookies) > 0 {
		names := make([]string, 0, len(s.aff.cookies))
		for n := range s.aff.cookies {
			names = append(names, n)
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = (&http.Cookie{Name: n, Value: s.aff.cookies[n]}).String()
		}
		h.Set("Cookie", strings.Join(parts, "; "))
	}
	return h
}

// capture keeps what a response asks the session to send back: the
// values of the session-token headers, and its cookies (a cookie that
// expires is dropped).
func (o *Options) capture(s *session, h http.Header) {
	for _, name := range o.SessionTokens {
		if v := h.Get(name); v != "" {
			if s.aff.tokens == nil {
				s.aff.tokens = http.Header{}
			}
			s.aff.tokens.Set(name, v)
		}
	}
	if !o.SessionCookies {
		return
	}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if s.aff.cookies == nil {
			s.aff.cookies = map[string]string{}
		}
		if c.MaxAge < 0 {
			delete(s.aff.cookies, c.Name)
			continue
		}
		s.aff.cookies[c.Name] = c.Value
	}
}

package server

import (
	"strconv"
	"strings"
)

// etag returns the strong entity tag of generation gen, such as
// "9c1f0e7a5b3d2c48-42" (quotes included).
func (s *server) etag(gen uint64) string {
	return `"` + s.nonce + "-" + strconv.FormatUint(gen, 10) + `"`
}

// ownGeneration returns the generation that tag names, when it is a tag of
// this server exactly as etag writes it.
func (s *server) ownGeneration(tag string) (uint64, bool) {
	digits, ok := strings.CutPrefix(strings.TrimSuffix(tag, `"`), `"`+s.nonce+"-")
	gen, err := strconv.ParseUint(digits, 10, 64)
	return gen, ok && err == nil && s.etag(gen) == tag
}

// namesTag reports whether an If-None-Match field, its lines combined as one
// list, holds tag: it is "*", or a list of entity tags one of which matches
// tag by weak comparison (W/"x" matches "x"), as RFC 9110 sections 8.8.3.2
// and 13.1.2 define it. A malformed field names nothing, nor does an absent
// one: the request is then answered in full.
func namesTag(lines []string, tag string) bool {
	list := strings.Trim(strings.Join(lines, ","), " \t")
	if list == "*" {
		return true
	}
	found := false
	for list = strings.TrimLeft(list, ", \t"); list != ""; { // empty list elements are allowed
		opaque, rest, ok := cutETag(list)
		rest = strings.TrimLeft(rest, " \t")
		if !ok || rest != "" && rest[0] != ',' {
			return false
		}
		found, list = found || opaque == tag, strings.TrimLeft(rest, ", \t")
	}
	return found
}

// cutETag cuts the entity tag ([W/] DQUOTE *etagc DQUOTE, etagc = %x21 /
// %x23-7E / %x80-FF) at the start of s: its opaque tag, quotes included.
func cutETag(s string) (opaque, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	for i := 1; i < len(s) && s[0] == '"'; i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c < 0x21 || c == 0x7F:
			return "", "", false
		}
	}
	return "", "", false
}

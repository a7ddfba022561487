package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"recallref/archive"
)

type response struct {
	status int
	header http.Header
	body   string
}

// json decodes the body, failing the test when it is not JSON.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

type client struct {
	t     *testing.T
	url   string
	token string
}

// newServer starts a test server over a fresh archive.
func newServer(t *testing.T, firstSeq int64, token string) *client {
	return newServerOpts(t, firstSeq, Options{Token: token})
}

// newServerOpts starts a test server with these options over a fresh archive.
func newServerOpts(t *testing.T, firstSeq int64, opts Options) *client {
	srv := httptest.NewServer(New(archive.New(firstSeq), opts))
	t.Cleanup(srv.Close)
	return &client{t, srv.URL, opts.Token}
}

func (c *client) do(method, path, body string) response {
	c.t.Helper()
	return c.doBytes(method, path, []byte(body), "Bearer "+c.token)
}

// doHeaders sends a request with no body and these header lines.
func (c *client) doHeaders(method, path string, header http.Header) response {
	c.t.Helper()
	return c.send(method, path, nil, "Bearer "+c.token, header)
}

func (c *client) doBytes(method, path string, body []byte, auth string) response {
	c.t.Helper()
	return c.send(method, path, body, auth, nil)
}

func (c *client) send(method, path string, body []byte, auth string, header http.Header) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c.token != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// check fails unless r has this status and a JSON body equal to want (as
// decoded JSON, or "" to skip the body).
func check(t *testing.T, what string, r response, status int, want string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d; want %d (body %q)", what, r.status, status, r.body)
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if want == "" {
		return
	}
	var got, exp any
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Errorf("%s: body %q is not JSON: %v", what, r.body, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("%s: body %s; want %s", what, r.body, want)
	}
}

func (c *client) archive(label, content string, locked bool) int64 {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"label": label, "content": content, "locked": locked})
	r := c.do("POST", PathArchive, string(body))
	if r.status != 200 {
		c.t.Fatalf("archive: %d %s", r.status, r.body)
	}
	return int64(r.json(c.t)["seq"].(float64))
}

func TestArchiveRoute(t *testing.T) {
	c := newServer(t, 1000, "")
	check(t, "first", c.do("POST", PathArchive, `{"label":"a","content":"b"}`), 200, `{"seq":1000,"id":"r1000"}`)
	check(t, "empty label, locked", c.do("POST", PathArchive, `{"label":"","content":"","locked":true}`), 200, `{"seq":1001,"id":"r1001"}`)
	check(t, "locked false", c.do("POST", PathArchive, `{"label":"","content":"x","locked":false}`), 200, `{"seq":1002,"id":"r1002"}`)
	check(t, "locked null", c.do("POST", PathArchive, `{"label":"","content":"x","locked":null,"other":1}`), 200, `{"seq":1003,"id":"r1003"}`)

	for _, body := range []string{
		``, `not json`, `null`, `[]`, `"x"`, `1`, `{}`,
		`{"label":"a"}`, `{"content":"a"}`, `{"Label":"a","content":"b"}`,
		`{"label":null,"content":"b"}`, `{"label":1,"content":"b"}`, `{"label":"a","content":["b"]}`,
		`{"label":"a","content":"b","locked":"true"}`, `{"label":"a","content":"b","locked":1}`,
		`{"label":"a","content":"b"} x`, `{"label":"a","content":"b"}{}`,
	} {
		r := c.do("POST", PathArchive, body)
		check(t, "bad body "+body, r, 400, "")
		if _, ok := r.json(t)["error"].(string); !ok {
			t.Errorf("bad body %s: no error string in %s", body, r.body)
		}
	}
	// Bad bodies took no seq.
	check(t, "after bad bodies", c.do("POST", PathArchive, `{"label":"a","content":"b"}`), 200, `{"seq":1004,"id":"r1004"}`)

	r := c.do("GET", PathArchive, "")
	check(t, "GET archive", r, 405, `{"error":"method not allowed"}`)
	if r.header.Get("Allow") != "POST" {
		t.Errorf("Allow = %q", r.header.Get("Allow"))
	}

	big := []byte(`{"label":"a","content":"` + strings.Repeat("x", MaxBodyBytes) + `"}`)
	check(t, "too large", c.doBytes("POST", PathArchive, big, ""), 413, `{"error":"request body too large"}`)
}

func TestBlockRoute(t *testing.T) {
	c := newServer(t, 7, "")
	c.archive("<b>&amp;", "line\u2028two", false)
	c.archive("secret", "hidden", true)

	check(t, "found", c.do("GET", PathBlock+"?seq=7", ""), 200, `{"seq":7,"label":"<b>&amp;","content":"line\u2028two"}`)
	r := c.do("GET", PathBlock+"?seq=7", "")
	if !strings.Contains(r.body, `\u003cb\u003e\u0026amp;`) || !strings.Contains(r.body, `\u2028`) {
		t.Errorf("block body %s is not encoding/json's HTML-escaped form", r.body)
	}
	check(t, "plus sign", c.do("GET", PathBlock+"?seq=%2B7", ""), 200, `{"seq":7,"label":"<b>&amp;","content":"line\u2028two"}`)
	check(t, "leading zeros", c.do("GET", PathBlock+"?seq=007", ""), 200, "")
	check(t, "first of two", c.do("GET", PathBlock+"?seq=7&seq=8", ""), 200, "")
	for _, q := range []string{"8", "9", "6", "0", "-7", "9223372036854775807", "-9223372036854775808"} {
		check(t, "absent or locked "+q, c.do("GET", PathBlock+"?seq="+q, ""), 404, `{"error":"not found"}`)
	}
	for _, q := range []string{"", "?", "?seq", "?seq=", "?seq=r7", "?seq=7a", "?seq=7.0", "?seq=+", "?seq=%207", "?seq=0x7", "?seq=1_0", "?seq=9223372036854775808", "?SEQ=7", "?sequence=7"} {
		check(t, "bad seq "+q, c.do("GET", PathBlock+q, ""), 400, "")
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "HEAD"} {
		r := c.do(m, PathBlock+"?seq=7", "")
		if r.status != 405 || r.header.Get("Allow") != "GET" {
			t.Errorf("%s block: %d, Allow %q", m, r.status, r.header.Get("Allow"))
		}
	}
}

func TestBlocksRoute(t *testing.T) {
	c := newServer(t, 1, "")
	r := c.do("GET", PathBlocks, "")
	check(t, "empty", r, 200, `{"blocks":[]}`)
	if strings.TrimSpace(r.body) != `{"blocks":[]}` {
		t.Errorf("empty blocks body = %q", r.body)
	}
	c.archive("a", "one", false)
	c.archive("locked", "never", true)
	c.archive("", "three", false)
	check(t, "blocks", c.do("GET", PathBlocks, ""), 200,
		`{"blocks":[{"seq":1,"label":"a","content":"one"},{"seq":3,"label":"","content":"three"}]}`)
	check(t, "query ignored", c.do("GET", PathBlocks+"?x=1", ""), 200, "")
	r = c.do("POST", PathBlocks, "")
	if r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Errorf("POST blocks: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

func TestExecRoute(t *testing.T) {
	c := newServer(t, 5, "")
	c.archive("notes", "hello <world>", false)
	c.archive("hello", "locked hello", true)

	exec := func(name, args string) response {
		body, _ := json.Marshal(map[string]string{"name": name, "args": args})
		return c.do("POST", PathExec, string(body))
	}
	check(t, "recall", exec("recall", `{"id":"r5"}`), 200, `{"output":"[r5] notes\nhello <world>"}`)
	check(t, "recall locked", exec("recall", `{"id":"r6"}`), 200, `{"output":"no archived block \"r6\""}`)
	check(t, "recall invalid args", exec("recall", `{"id":`), 200, `{"output":"recall needs an \"id\", such as \"r7\""}`)
	check(t, "recall_search", exec("recall_search", `{"query":"HELLO"}`), 200,
		`{"output":"1 of 1 matching blocks for \"HELLO\":\n[r5] notes (score 1)\n  hello <world>"}`)
	r := exec("recall", `{"id":"r5"}`)
	if !strings.Contains(r.body, `\u003cworld\u003e`) {
		t.Errorf("exec body %s is not HTML-escaped", r.body)
	}
	check(t, "lone surrogate", c.do("POST", PathExec, `{"name":"recall","args":"{\"id\":\"\\ud800\"}"}`), 200,
		`{"output":"no archived block \"\ufffd\""}`)

	check(t, "unknown tool", exec("nope", `{}`), 404, `{"error":"unknown tool \"nope\""}`)
	check(t, "unknown tool case", exec("Recall", `{}`), 404, `{"error":"unknown tool \"Recall\""}`)
	check(t, "unknown tool quoting", exec("a\"b\x00", `{}`), 404, `{"error":"unknown tool \"a\\\"b\\x00\""}`)

	for _, body := range []string{
		``, `{`, `null`, `[]`, `{}`, `{"name":"recall"}`, `{"args":"{}"}`,
		`{"name":"recall","args":{"id":"r5"}}`, `{"name":1,"args":"{}"}`, `{"name":"recall","args":null}`,
		`{"Name":"recall","args":"{}"}`,
	} {
		check(t, "bad exec body "+body, c.do("POST", PathExec, body), 400, "")
	}
	r = c.do("GET", PathExec, "")
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET exec: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

func TestUnknownPath(t *testing.T) {
	c := newServer(t, 1, "")
	for _, p := range []string{"/", "/nope", "/internal/v1/recall/block/", "/internal/v1/recall", "/internal/v1/tool/exec/x", "/debug/other"} {
		r := c.do("GET", p, "")
		if r.status != 404 || r.body != "404 page not found\n" || strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d %q %q; want the bare net/http 404", p, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
}

func TestToken(t *testing.T) {
	c := newServer(t, 1, "s3cret")
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer s3cre", "Bearer  s3cret", "Basic s3cret", "s3cret", "Bearer S3CRET"} {
		for _, p := range []string{PathBlocks, PathBlock + "?seq=1", "/nope", PathRequests, PathReads} {
			r := c.doBytes("GET", p, nil, auth)
			check(t, "auth "+auth+" "+p, r, 401, `{"error":"unauthorized"}`)
		}
		check(t, "auth "+auth+" POST", c.doBytes("POST", PathArchive, []byte(`{"label":"","content":""}`), auth), 401, `{"error":"unauthorized"}`)
	}
	// A trailing space is optional white space that HTTP strips.
	check(t, "trailing space", c.doBytes("GET", PathBlocks, nil, "Bearer s3cret "), 200, `{"blocks":[]}`)
	check(t, "token", c.do("GET", PathBlocks, ""), 200, `{"blocks":[]}`)
	check(t, "scheme case", c.doBytes("GET", PathBlocks, nil, "bearer s3cret"), 200, `{"blocks":[]}`)
	check(t, "token archive", c.do("POST", PathArchive, `{"label":"","content":""}`), 200, `{"seq":1,"id":"r1"}`)
}

func TestDebugRequests(t *testing.T) {
	c := newServer(t, 1, "")
	check(t, "empty", c.do("GET", PathRequests, ""), 200, `{"requests":[],"next":0}`)
	c.archive("a", "b", false)
	c.do("GET", PathBlock+"?seq=1", "")
	c.do("GET", PathBlock+"?seq=%2B1&x=%20", "")
	c.do("GET", PathBlocks, "")
	c.do("DELETE", PathBlocks, "")
	c.do("GET", "/nope?q", "")
	c.do("GET", "/debug/other", "")
	r := c.do("POST", PathRequests, "")
	if r.status != 405 {
		t.Errorf("POST /debug/requests: %d", r.status)
	}
	check(t, "requests", c.do("GET", PathRequests, ""), 200, `{"requests":[
		"POST /internal/v1/recall/archive",
		"GET /internal/v1/recall/block?seq=1",
		"GET /internal/v1/recall/block?seq=%2B1&x=%20",
		"GET /internal/v1/recall/blocks",
		"DELETE /internal/v1/recall/blocks",
		"GET /nope?q"],
		"next":6}`)

	// With a token, unauthorized requests are recorded too.
	c = newServer(t, 1, "tok")
	c.doBytes("GET", PathBlocks, nil, "")
	c.do("GET", PathBlock+"?seq=3", "")
	check(t, "requests with token", c.do("GET", PathRequests, ""), 200, `{"requests":[
		"GET /internal/v1/recall/blocks",
		"GET /internal/v1/recall/block?seq=3"],
		"next":2}`)
}

// reads returns the tools' archive reads that GET /debug/reads lists.
func (c *client) reads() []string {
	c.t.Helper()
	r := c.do("GET", PathReads, "")
	if r.status != 200 {
		c.t.Fatalf("GET %s: %d %s", PathReads, r.status, r.body)
	}
	var doc struct {
		Reads []string `json:"reads"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil || doc.Reads == nil {
		c.t.Fatalf("GET %s: body %q has no reads array (%v)", PathReads, r.body, err)
	}
	return doc.Reads
}

func TestDebugReads(t *testing.T) {
	c := newServer(t, 1, "")
	check(t, "empty", c.do("GET", PathReads, ""), 200, `{"reads":[],"next":0}`)
	c.archive("hello", "one", false)
	c.archive("hello", "locked", true)

	// The read routes are not tool reads.
	c.do("GET", PathBlock+"?seq=1", "")
	c.do("GET", PathBlocks, "")
	if got := c.reads(); len(got) != 0 {
		t.Fatalf("reads after the read routes = %q; want none", got)
	}

	exec := func(name, args string) {
		body, _ := json.Marshal(map[string]string{"name": name, "args": args})
		if r := c.do("POST", PathExec, string(body)); r.status != 200 && r.status != 404 {
			t.Fatalf("exec %s %s: %d %s", name, args, r.status, r.body)
		}
	}
	for _, tc := range []struct {
		name, args string
		want       []string
	}{
		{"recall", `{"id":"r1"}`, []string{"block?seq=1"}},
		{"recall", `{"id":"r2"}`, []string{"block?seq=2"}}, // locked: read, not found
		{"recall", `{"id":" R007 "}`, []string{"block?seq=7"}},
		{"recall", `{"id":"r9223372036854775807"}`, []string{"block?seq=9223372036854775807"}},
		{"recall", `{}`, nil},
		{"recall", `{"id":"  "}`, nil},
		{"recall", `{"id":"r0"}`, nil},
		{"recall", `{"id":"r-1"}`, nil},
		{"recall", `{"id":"r99999999999999999999"}`, nil},
		{"recall", `{"id":`, nil},
		{"recall_search", `{"query":"HELLO"}`, []string{"blocks"}},
		{"recall_search", `{"query":"nothing matches"}`, []string{"blocks"}},
		{"recall_search", `{"query":"a ! b"}`, nil},
		{"recall_search", `{"query":" "}`, nil},
		{"recall_search", `{}`, nil},
		{"nope", `{"id":"r1"}`, nil},
	} {
		before := c.reads()
		exec(tc.name, tc.args)
		after := c.reads()
		if !slices.Equal(after[:len(before)], before) {
			t.Fatalf("%s %s: earlier reads changed: %q then %q", tc.name, tc.args, before, after)
		}
		if got := after[len(before):]; !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: reads %q; want %q", tc.name, tc.args, got, tc.want)
		}
	}
	if n := len(c.reads()); n != 6 {
		t.Errorf("%d reads in all; want 6", n)
	}

	r := c.do("POST", PathReads, "")
	if r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Errorf("POST %s: %d, Allow %q", PathReads, r.status, r.header.Get("Allow"))
	}
	// /debug/reads is not a request that /debug/requests lists.
	for _, req := range c.do("GET", PathRequests, "").json(t)["requests"].([]any) {
		if strings.Contains(req.(string), "/debug/") {
			t.Errorf("/debug/requests lists %q", req)
		}
	}

	// With a token, /debug/reads needs it too.
	c = newServer(t, 1, "tok")
	check(t, "reads without token", c.doBytes("GET", PathReads, nil, ""), 401, `{"error":"unauthorized"}`)
	check(t, "reads with token", c.do("GET", PathReads, ""), 200, `{"reads":[],"next":0}`)
}

func TestVersion(t *testing.T) {
	h := New(archive.New(1), Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", PathVersion, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", PathVersion, rec.Code)
	}
	var got map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"go_version":      runtime.Version(),
		"unicode_version": unicode.Version,
		"goos":            runtime.GOOS,
		"goarch":          runtime.GOARCH,
	}
	if !maps.Equal(got, want) {
		t.Errorf("version = %v, want %v", got, want)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", PathVersion, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d", PathVersion, rec.Code)
	}
}

var etagForm = regexp.MustCompile(`^"[0-9a-f]{16}-[0-9]+"$`)

// blocksTag reads /blocks in full and returns its ETag.
func (c *client) blocksTag() string {
	c.t.Helper()
	r := c.do("GET", PathBlocks, "")
	if r.status != 200 {
		c.t.Fatalf("GET blocks: %d %s", r.status, r.body)
	}
	tag := r.header.Get("ETag")
	if !etagForm.MatchString(tag) {
		c.t.Fatalf("ETag %q is not a strong \"<nonce>-<generation>\" tag", tag)
	}
	return tag
}

func (c *client) blocksIfNoneMatch(lines ...string) response {
	c.t.Helper()
	return c.doHeaders("GET", PathBlocks, http.Header{"If-None-Match": lines})
}

func TestBlocksETag(t *testing.T) {
	c := newServer(t, 1, "")
	empty := c.blocksTag()
	if again := c.blocksTag(); again != empty {
		t.Errorf("tag changed without a change: %s then %s", empty, again)
	}
	weak := "W/" + empty

	for _, lines := range [][]string{
		{empty}, {weak}, {"*"}, {" * "}, {`"x", ` + empty}, {`W/"x",` + weak + `, "y"`},
		{`"x"`, empty}, {", ," + empty + " ,"}, {"\t" + empty + "\t"},
	} {
		r := c.blocksIfNoneMatch(lines...)
		if r.status != 304 || r.body != "" || r.header.Get("ETag") != empty {
			t.Errorf("If-None-Match %q: %d, ETag %q, body %q; want 304, %s, no body",
				lines, r.status, r.header.Get("ETag"), r.body, empty)
		}
	}
	bare := strings.Trim(empty, `"`)
	for _, lines := range [][]string{
		{`"x"`}, {bare}, {"w/" + empty}, {empty + ` "x"`}, {`"x" ` + empty}, {empty + " junk"},
		{`"x`}, {"*, " + empty}, {"*", empty}, {""}, {" "}, {`"a"b"`}, {"W/ " + empty},
		{`"` + bare},
	} {
		r := c.blocksIfNoneMatch(lines...)
		if r.status != 200 || r.header.Get("ETag") != empty {
			t.Errorf("If-None-Match %q: %d, ETag %q; want a full 200 with %s", lines, r.status, r.header.Get("ETag"), empty)
		}
		check(t, fmt.Sprintf("If-None-Match %q", lines), r, 200, `{"blocks":[]}`)
	}

	// Every change of the archive changes the tag; a stale tag gets the new set.
	seen := map[string]bool{empty: true}
	c.archive("a", "one", false)
	one := c.blocksTag()
	c.archive("b", "locked", true)
	two := c.blocksTag()
	for _, tag := range []string{one, two} {
		if seen[tag] {
			t.Errorf("tag %s reused", tag)
		}
		seen[tag] = true
	}
	r := c.blocksIfNoneMatch(empty)
	check(t, "stale tag", r, 200, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
	if r.header.Get("ETag") != two {
		t.Errorf("stale tag: ETag %q; want %s", r.header.Get("ETag"), two)
	}
	if r := c.blocksIfNoneMatch(two); r.status != 304 {
		t.Errorf("current tag after changes: %d; want 304", r.status)
	}

	// Another method is still 405, whatever the condition.
	r = c.send("POST", PathBlocks, nil, "", http.Header{"If-None-Match": {"*"}})
	if r.status != 405 || r.header.Get("ETag") != "" {
		t.Errorf("POST blocks with If-None-Match: %d, ETag %q", r.status, r.header.Get("ETag"))
	}
	// Two servers never share a tag (their nonces differ).
	if other := newServer(t, 1, "").blocksTag(); other == empty {
		t.Errorf("two servers both tagged their empty archive %s", other)
	}
}

func TestBlocksETagToken(t *testing.T) {
	c := newServer(t, 1, "tok")
	tag := c.blocksTag()
	r := c.send("GET", PathBlocks, nil, "", http.Header{"If-None-Match": {tag}})
	check(t, "If-None-Match without token", r, 401, `{"error":"unauthorized"}`)
	if r.header.Get("ETag") != "" {
		t.Errorf("401 with ETag %q", r.header.Get("ETag"))
	}
	if r := c.blocksIfNoneMatch(tag); r.status != 304 {
		t.Errorf("If-None-Match with token: %d; want 304", r.status)
	}
}

func TestBlocksNoETag(t *testing.T) {
	c := newServerOpts(t, 1, Options{NoETag: true})
	c.archive("a", "one", false)
	for _, lines := range [][]string{nil, {"*"}, {`"x"`}} {
		r := c.blocksIfNoneMatch(lines...)
		check(t, fmt.Sprintf("NoETag, If-None-Match %q", lines), r, 200, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
		if _, ok := r.header["Etag"]; ok {
			t.Errorf("NoETag: ETag %q", r.header.Get("ETag"))
		}
	}
}

// TestBlocksETagNamesOneSet reads /blocks while blocks are archived: a tag
// must always come with the same body.
func TestBlocksETagNamesOneSet(t *testing.T) {
	h := New(archive.New(1), Options{})
	get := func() (string, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", PathBlocks, nil))
		return rec.Header().Get("ETag"), rec.Body.String()
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("POST", PathArchive, strings.NewReader(`{"label":"l","content":"c","locked":`+strconv.FormatBool(g == 0)+`}`)))
			}
		}(g)
	}
	var mu sync.Mutex
	bodies := map[string]string{}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tag, body := get()
				mu.Lock()
				if prev, ok := bodies[tag]; ok && prev != body {
					t.Errorf("tag %s named two sets", tag)
				}
				bodies[tag] = body
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func TestNamesTag(t *testing.T) {
	const tag = `"ab-1"`
	for _, tt := range []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{tag}, true},
		{[]string{"\"\x80\xff\", " + tag}, true}, // obs-text is allowed in a tag
		{[]string{"\"\x01\", " + tag}, false},    // a control character is not
		{[]string{"\"a\tb\", " + tag}, false},
		{[]string{`"a b", ` + tag}, false},
		{[]string{`"ab-1 "`}, false},
		{[]string{`"AB-1"`}, false},
		{[]string{`W/"ab-1"`}, true},
		{[]string{`W/W/"ab-1"`}, false},
		{[]string{"", tag}, true}, // an empty line adds an empty list element
		{[]string{`"a,b", ` + tag}, true},
		{[]string{`"a,b"`}, false},
		{[]string{"\"\x7f\", " + tag}, false}, // nor DEL
		{[]string{" * "}, true},
		{[]string{"*, " + tag}, false},
		{[]string{tag + " x"}, false},
		{[]string{`"x"` + tag}, false},
		{[]string{"\t, ," + tag + " ,"}, true},
		{[]string{`"ab-1`}, false},
		{[]string{`W/`}, false},
	} {
		if got := namesTag(tt.lines, tag); got != tt.want {
			t.Errorf("namesTag(%q) = %v; want %v", tt.lines, got, tt.want)
		}
	}
}

func (c *client) exec(name, args string) string {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "args": args})
	r := c.do("POST", PathExec, string(body))
	if r.status != 200 {
		c.t.Fatalf("exec %s %s: %d %s", name, args, r.status, r.body)
	}
	return r.json(c.t)["output"].(string)
}

func TestLockRoute(t *testing.T) {
	c := newServer(t, 1, "")
	c.archive("hello", "one", false)
	c.archive("hello", "two", true)
	tag := c.blocksTag()

	check(t, "lock 1", c.do("POST", PathLock, `{"seq":1,"locked":true}`), 200, `{"seq":1,"locked":true}`)
	check(t, "block 1 locked", c.do("GET", PathBlock+"?seq=1", ""), 404, `{"error":"not found"}`)
	check(t, "blocks, 1 locked", c.do("GET", PathBlocks, ""), 200, `{"blocks":[]}`)
	if got := c.exec("recall", `{"id":"r1"}`); got != `no archived block "r1"` {
		t.Errorf("recall of a locked block: %q", got)
	}
	if got := c.exec("recall_search", `{"query":"hello"}`); got != `no archived block matches "hello"` {
		t.Errorf("search with every block locked: %q", got)
	}
	locked := c.blocksTag()
	if locked == tag {
		t.Errorf("lock kept the tag %s", tag)
	}

	check(t, "unlock 2", c.do("POST", PathLock, `{"seq":2,"locked":false}`), 200, `{"seq":2,"locked":false}`)
	check(t, "block 2 unlocked", c.do("GET", PathBlock+"?seq=2", ""), 200, `{"seq":2,"label":"hello","content":"two"}`)
	if got := c.exec("recall", `{"id":"r2"}`); got != "[r2] hello\ntwo" {
		t.Errorf("recall of an unlocked block: %q", got)
	}
	unlocked := c.blocksTag()
	if unlocked == locked || unlocked == tag {
		t.Errorf("tags %s, %s, %s: each state needs its own", tag, locked, unlocked)
	}
	// No change, no new tag.
	check(t, "unlock 2 again", c.do("POST", PathLock, `{"seq":2,"locked":false,"x":1}`), 200, `{"seq":2,"locked":false}`)
	if r := c.blocksIfNoneMatch(unlocked); r.status != 304 {
		t.Errorf("tag after a lock that changed nothing: %d; want 304", r.status)
	}

	for _, body := range []string{`{"seq":3,"locked":true}`, `{"seq":0,"locked":true}`, `{"seq":-1,"locked":false}`, `{"seq":9223372036854775807,"locked":true}`} {
		check(t, "never archived "+body, c.do("POST", PathLock, body), 404, `{"error":"not found"}`)
	}
	for _, body := range []string{
		``, `x`, `null`, `[]`, `{}`, `{"seq":1}`, `{"locked":true}`, `{"seq":null,"locked":true}`,
		`{"seq":1,"locked":null}`, `{"seq":"1","locked":true}`, `{"seq":1.5,"locked":true}`,
		`{"seq":1e0,"locked":true}`, `{"seq":9223372036854775808,"locked":true}`, `{"seq":1,"locked":"true"}`,
		`{"seq":1,"locked":1}`, `{"Seq":1,"locked":true}`, `{"seq":1,"locked":true} x`,
	} {
		r := c.do("POST", PathLock, body)
		check(t, "bad lock body "+body, r, 400, "")
		if _, ok := r.json(t)["error"].(string); !ok {
			t.Errorf("bad lock body %s: no error string in %s", body, r.body)
		}
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		r := c.do(m, PathLock, `{"seq":1,"locked":false}`)
		check(t, m+" lock", r, 405, `{"error":"method not allowed"}`)
		if r.header.Get("Allow") != "POST" {
			t.Errorf("%s lock: Allow %q", m, r.header.Get("Allow"))
		}
	}
	check(t, "block 1 still locked", c.do("GET", PathBlock+"?seq=1", ""), 404, `{"error":"not found"}`)

	c = newServer(t, 1, "tok")
	c.archive("a", "b", false)
	check(t, "lock without token", c.doBytes("POST", PathLock, []byte(`{"seq":1,"locked":true}`), ""), 401, `{"error":"unauthorized"}`)
	check(t, "block after a refused lock", c.do("GET", PathBlock+"?seq=1", ""), 200, "")
}

func TestResetRoute(t *testing.T) {
	c := newServer(t, 7, "")
	initial := c.blocksTag()
	c.archive("hello", "one", false)
	c.archive("hello", "two", true)
	c.exec("recall", `{"id":"r7"}`)
	before := c.blocksTag()

	check(t, "reset", c.do("POST", PathReset, ""), 200, `{"first_seq":7}`)
	check(t, "requests after reset", c.do("GET", PathRequests, ""), 200, `{"requests":[],"next":0}`)
	check(t, "reads after reset", c.do("GET", PathReads, ""), 200, `{"reads":[],"next":0}`)
	check(t, "blocks after reset", c.do("GET", PathBlocks, ""), 200, `{"blocks":[]}`)
	check(t, "block after reset", c.do("GET", PathBlock+"?seq=7", ""), 404, `{"error":"not found"}`)
	check(t, "lock after reset", c.do("POST", PathLock, `{"seq":8,"locked":false}`), 404, `{"error":"not found"}`)
	// The same empty set as at the start, under a new tag: generations are never reused.
	after := c.blocksTag()
	if after == initial || after == before {
		t.Errorf("tag after reset %s; before: %s, %s", after, initial, before)
	}
	for _, tag := range []string{initial, before} {
		if r := c.blocksIfNoneMatch(tag); r.status != 200 {
			t.Errorf("tag %s from before the reset: %d; want 200", tag, r.status)
		}
	}
	if seq := c.archive("a", "b", false); seq != 7 {
		t.Errorf("first seq after reset = %d; want 7", seq)
	}

	for _, tc := range []struct {
		body  string
		first int64
	}{
		{`{"first_seq":500}`, 500}, {" \n", 7}, {`{}`, 7}, {`{"first_seq":null}`, 7}, {`{"other":1}`, 7},
		{`{"first_seq":9223372036854775807}`, 9223372036854775807}, {`{"first_seq":1}`, 1},
	} {
		r := c.do("POST", PathReset, tc.body)
		check(t, "reset "+tc.body, r, 200, "")
		if want := fmt.Sprintf(`{"first_seq":%d}`, tc.first); strings.TrimSpace(r.body) != want {
			t.Errorf("reset %s: %s; want %s", tc.body, r.body, want)
		}
		id := c.do("POST", PathArchive, `{"label":"a","content":"b"}`).json(t)["id"]
		if want := "r" + strconv.FormatInt(tc.first, 10); id != want {
			t.Errorf("reset %s: first id %v; want %s", tc.body, id, want)
		}
	}
	for _, body := range []string{
		`x`, `null`, `[]`, `1`, `{"first_seq":0}`, `{"first_seq":-1}`, `{"first_seq":"5"}`,
		`{"first_seq":1.5}`, `{"first_seq":9223372036854775808}`, `{"first_seq":5} x`,
	} {
		check(t, "bad reset "+body, c.do("POST", PathReset, body), 400, "")
	}
	// A bad body reset nothing.
	if seq := c.archive("a", "b", false); seq != 2 {
		t.Errorf("next seq after bad resets = %d; want 2", seq)
	}
	r := c.do("GET", PathReset, "")
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET reset: %d, Allow %q", r.status, r.header.Get("Allow"))
	}

	c = newServer(t, 1, "tok")
	c.archive("a", "b", false)
	check(t, "reset without token", c.doBytes("POST", PathReset, nil, ""), 401, `{"error":"unauthorized"}`)
	check(t, "blocks after a refused reset", c.do("GET", PathBlocks, ""), 200, `{"blocks":[{"seq":1,"label":"a","content":"b"}]}`)
}

func TestNoDebug(t *testing.T) {
	for _, token := range []string{"", "tok"} {
		c := newServerOpts(t, 1, Options{Token: token, NoDebug: true})
		c.archive("a", "one", false)
		for _, req := range []struct{ method, path, body string }{
			{"GET", PathRequests, ""}, {"GET", PathRequests + "?since=0", ""}, {"GET", PathReads, ""},
			{"GET", PathVersion, ""}, {"POST", PathLock, `{"seq":1,"locked":true}`},
			{"POST", PathReset, ""}, {"POST", PathArchiveBatch, `{"blocks":[]}`},
			{"POST", PathExecBatch, `{"calls":[]}`}, {"POST", PathBatch, `{"requests":[]}`},
			{"GET", "/debug/", ""}, {"POST", "/debug/other", ""},
		} {
			r := c.do(req.method, req.path, req.body)
			if r.status != 404 || r.body != "404 page not found\n" || strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("token %q, %s %s: %d %q %q; want the bare net/http 404", token, req.method, req.path, r.status, r.header.Get("Content-Type"), r.body)
			}
		}
		// Neither the lock nor the reset happened; the contract's routes still answer.
		check(t, "blocks", c.do("GET", PathBlocks, ""), 200, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
	}
	// The request log is still kept, without the /debug/ requests.
	srv := New(archive.New(1), Options{NoDebug: true}).(*server)
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", PathBlocks, nil))
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", PathRequests, nil))
	if got, _ := srv.requests.since(0); !slices.Equal(got, []string{"GET " + PathBlocks}) {
		t.Errorf("request log behind NoDebug = %q", got)
	}
}

func TestRewriteOutput(t *testing.T) {
	c := newServerOpts(t, 1, Options{RewriteOutput: []Rewrite{
		{"no archived block matches", "no block matches"},
		{"no block", "NO BLOCK"}, // works on the result of the rewrite before
		{"<", "&lt;"},
	}})
	c.archive("<a>", "no archived block matches", false)
	if got := c.exec("recall_search", `{"query":"nothing"}`); got != `NO BLOCK matches "nothing"` {
		t.Errorf("rewritten search: %q", got)
	}
	if got := c.exec("recall", `{"id":"r1"}`); got != "[r1] &lt;a>\nNO BLOCK matches" {
		t.Errorf("rewritten recall: %q", got)
	}
	// Only the tool outputs: the archive and the errors are served as they are.
	check(t, "block", c.do("GET", PathBlock+"?seq=1", ""), 200, `{"seq":1,"label":"<a>","content":"no archived block matches"}`)
	check(t, "blocks", c.do("GET", PathBlocks, ""), 200, `{"blocks":[{"seq":1,"label":"<a>","content":"no archived block matches"}]}`)
	check(t, "unknown tool", c.do("POST", PathExec, `{"name":"<x>","args":""}`), 404, `{"error":"unknown tool \"<x>\""}`)
}

func TestExecDelay(t *testing.T) {
	const delay = 40 * time.Millisecond
	c := newServerOpts(t, 1, Options{ExecDelay: delay})
	start := time.Now()
	if got := c.exec("recall", `{}`); got != `recall needs an "id", such as "r7"` {
		t.Errorf("delayed exec: %q", got)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("exec answered after %v; want at least %v", d, delay)
	}
	// The other routes are not delayed; a client that gives up ends the wait.
	h := New(archive.New(1), Options{ExecDelay: time.Hour})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", PathBlocks, nil))
	if rec.Code != 200 {
		t.Errorf("blocks beside a delayed exec: %d", rec.Code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", PathExec, strings.NewReader(`{"name":"recall","args":"{}"}`)).WithContext(ctx))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a delayed exec outlived its request")
	}
}

// A client that gives up over a real connection ends the wait: the server
// closes without waiting out the delay.
func TestExecDelayEndsWithTheConnection(t *testing.T) {
	srv := httptest.NewServer(New(archive.New(1), Options{ExecDelay: time.Hour}))
	client := &http.Client{Timeout: 50 * time.Millisecond}
	if resp, err := client.Post(srv.URL+PathExec, "application/json", strings.NewReader(`{"name":"recall","args":"{}"}`)); err == nil {
		resp.Body.Close()
		t.Fatalf("a delayed exec answered %d", resp.StatusCode)
	}
	done := make(chan struct{})
	go func() {
		srv.Close() // waits for the handlers
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a delayed exec outlived its connection")
	}
}

func TestExecStatus(t *testing.T) {
	c := newServerOpts(t, 1, Options{ExecStatus: 503})
	c.archive("a", "one", false)
	for _, req := range []struct{ method, body string }{
		{"POST", `{"name":"recall","args":"{\"id\":\"r1\"}"}`}, {"POST", `{"name":"nope","args":""}`},
		{"POST", `not json`}, {"GET", ""},
	} {
		check(t, "exec down "+req.method+" "+req.body, c.do(req.method, PathExec, req.body), 503,
			`{"error":"tool endpoint down: 503 Service Unavailable"}`)
	}
	if got := c.reads(); len(got) != 0 {
		t.Errorf("a tool ran behind ExecStatus: reads %q", got)
	}
	check(t, "block", c.do("GET", PathBlock+"?seq=1", ""), 200, `{"seq":1,"label":"a","content":"one"}`)
	check(t, "blocks", c.do("GET", PathBlocks, ""), 200, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
	check(t, "archive", c.do("POST", PathArchive, `{"label":"b","content":"two"}`), 200, `{"seq":2,"id":"r2"}`)
}

func TestArchiveBatchRoute(t *testing.T) {
	c := newServer(t, 40, "tok")
	check(t, "batch", c.do("POST", PathArchiveBatch,
		`{"blocks":[{"label":"a","content":"one"},{"label":"","content":"","locked":true},{"label":"<b>","content":"two","locked":false}]}`),
		200, `{"seqs":[40,41,42]}`)
	check(t, "empty batch", c.do("POST", PathArchiveBatch, `{"blocks":[]}`), 200, `{"seqs":[]}`)
	check(t, "no blocks", c.do("POST", PathArchiveBatch, `{}`), 200, `{"seqs":[]}`)
	// The blocks are archived as POST /archive archives them: in order, locked ones unreadable.
	check(t, "blocks", c.do("GET", PathBlocks, ""), 200,
		`{"blocks":[{"seq":40,"label":"a","content":"one"},{"seq":42,"label":"<b>","content":"two"}]}`)
	check(t, "after the batch", c.do("POST", PathArchive, `{"label":"c","content":"three"}`), 200, `{"seq":43,"id":"r43"}`)
	for _, body := range []string{
		``, `[]`, `{"blocks":{}}`, `{"blocks":[1]}`, `{"blocks":[null]}`,
		`{"blocks":[{"label":"a","content":"b"},{"label":"a"}]}`,
		`{"blocks":[{"label":"a","content":"b"},{"label":"a","content":"b","locked":1}]}`,
		`{"blocks":[{"label":1,"content":"b"}]}`,
	} {
		check(t, "bad batch "+body, c.do("POST", PathArchiveBatch, body), 400, "")
	}
	// A bad batch archived nothing; the batches are not in the request log.
	check(t, "after bad batches", c.do("POST", PathArchive, `{"label":"d","content":"four"}`), 200, `{"seq":44,"id":"r44"}`)
	check(t, "requests", c.do("GET", PathRequests, ""), 200, `{"requests":[
		"GET /internal/v1/recall/blocks",
		"POST /internal/v1/recall/archive",
		"POST /internal/v1/recall/archive"],
		"next":3}`)
	r := c.do("GET", PathArchiveBatch, "")
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET %s: %d, Allow %q", PathArchiveBatch, r.status, r.header.Get("Allow"))
	}
	check(t, "batch without token", c.doBytes("POST", PathArchiveBatch, []byte(`{"blocks":[]}`), ""), 401, `{"error":"unauthorized"}`)
}

// execBatch posts calls, given as name and args pairs, to /debug/exec.
func (c *client) execBatch(pairs ...string) response {
	c.t.Helper()
	var calls []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		calls = append(calls, map[string]string{"name": pairs[i], "args": pairs[i+1]})
	}
	body, _ := json.Marshal(map[string]any{"calls": calls})
	return c.do("POST", PathExecBatch, string(body))
}

// execResults returns the "results" of an answer of /debug/exec, each with the
// JSON body that /tool/exec would answer and its status.
func execResults(t *testing.T, r response) []map[string]any {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("exec batch: %d %s", r.status, r.body)
	}
	var doc struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil || doc.Results == nil {
		t.Fatalf("exec batch: body %q has no results array (%v)", r.body, err)
	}
	return doc.Results
}

func TestExecBatchRoute(t *testing.T) {
	c := newServer(t, 5, "")
	c.archive("notes", "hello <world>", false)
	c.archive("hello", "locked hello", true)
	pairs := []string{
		"recall", `{"id":"r5"}`,
		"recall", `{"id":"r6"}`,
		"recall", `{"id":`,
		"recall_search", `{"query":"HELLO"}`,
		"recall", "{\"id\":\"\\ud800\"}",
		"nope", `{}`,
		"recall_search", `{"query":"x y"}`,
	}
	before := len(c.reads())
	results := execResults(t, c.execBatch(pairs...))
	batchReads := c.reads()[before:]
	if len(results) != len(pairs)/2 {
		t.Fatalf("%d results for %d calls", len(results), len(pairs)/2)
	}
	// Each result is what /tool/exec answers for the call alone, reads included.
	for i := range results {
		name, args := pairs[2*i], pairs[2*i+1]
		body, _ := json.Marshal(map[string]string{"name": name, "args": args})
		alone := c.do("POST", PathExec, string(body))
		want := alone.json(t)
		want["status"] = float64(alone.status)
		if !reflect.DeepEqual(results[i], want) {
			t.Errorf("call %d (%s %s): %v; alone: %v", i, name, args, results[i], want)
		}
	}
	if all := c.reads(); !slices.Equal(batchReads, all[before+len(batchReads):]) {
		t.Errorf("reads of the batch %q; of the calls alone %q", batchReads, all[before+len(batchReads):])
	}
	check(t, "empty batch", c.do("POST", PathExecBatch, `{"calls":[]}`), 200, `{"results":[]}`)
	for _, body := range []string{
		``, `{`, `[]`, `{"calls":{}}`, `{"calls":[null]}`, `{"calls":[{"name":"recall"}]}`,
		`{"calls":[{"name":"recall","args":"{}"},{"name":"recall","args":{}}]}`,
	} {
		check(t, "bad batch "+body, c.do("POST", PathExecBatch, body), 400, "")
	}
	// Not in the request log: the log holds the contract's requests only.
	log := c.do("GET", PathRequests, "").json(t)["requests"].([]any)
	for _, entry := range log {
		if strings.Contains(entry.(string), "/debug/") {
			t.Errorf("request log holds %q", entry)
		}
	}
	r := c.do("GET", PathExecBatch, "")
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET %s: %d, Allow %q", PathExecBatch, r.status, r.header.Get("Allow"))
	}
}

func TestExecBatchTestOptions(t *testing.T) {
	c := newServerOpts(t, 1, Options{ExecStatus: 503})
	c.archive("a", "one", false)
	results := execResults(t, c.execBatch("recall", `{"id":"r1"}`, "nope", ""))
	want := []map[string]any{
		{"status": 503.0, "error": "tool endpoint down: 503 Service Unavailable"},
		{"status": 503.0, "error": "tool endpoint down: 503 Service Unavailable"},
	}
	if !reflect.DeepEqual(results, want) {
		t.Errorf("batch behind ExecStatus: %v", results)
	}
	if got := c.reads(); len(got) != 0 {
		t.Errorf("a tool ran behind ExecStatus: reads %q", got)
	}

	c = newServerOpts(t, 1, Options{RewriteOutput: []Rewrite{{"no archived block", "NONE"}}})
	results = execResults(t, c.execBatch("recall", `{"id":"r1"}`))
	if got := results[0]["output"]; got != `NONE "r1"` {
		t.Errorf("rewritten batch output: %q", got)
	}

	const delay = 40 * time.Millisecond
	c = newServerOpts(t, 1, Options{ExecDelay: delay})
	start := time.Now()
	execResults(t, c.execBatch("recall", `{}`, "recall", `{}`, "recall", `{}`))
	if d := time.Since(start); d < delay {
		t.Errorf("a delayed batch answered after %v; want at least %v", d, delay)
	}
}

// batchAnswer is one answer within an answer of /debug/batch, its body as sent.
type batchAnswer struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// batchAnswers returns the "responses" of an answer of /debug/batch.
func batchAnswers(t *testing.T, r response) []batchAnswer {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	var doc struct {
		Responses []batchAnswer `json:"responses"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil || doc.Responses == nil {
		t.Fatalf("batch: body %q has no responses array (%v)", r.body, err)
	}
	return doc.Responses
}

func TestBatchRoute(t *testing.T) {
	c := newServer(t, 5, "tok")
	c.archive("notes", "hello", false)
	search := c.exec("recall_search", `{"query":"hello"}`)
	// Go's outputs, the request log, then a lock: each answered as alone, in order.
	got := batchAnswers(t, c.do("POST", PathBatch, `{"requests":[
		{"method":"POST","path":"/debug/exec","body":{"calls":[{"name":"recall_search","args":"{\"query\":\"hello\"}"}]}},
		{"method":"GET","path":"/debug/requests?since=1"},
		{"method":"POST","path":"/debug/lock","body":{"seq":5,"locked":true}},
		{"method":"POST","path":"/debug/exec","body":{"calls":[{"name":"recall","args":"{\"id\":\"r5\"}"}]}}]}`))
	want := []batchAnswer{
		{200, json.RawMessage(`{"results":[{"output":"` + jsonText(t, search) + `","status":200}]}`)},
		{200, json.RawMessage(`{"next":2,"requests":["POST /internal/v1/tool/exec"]}`)},
		{200, json.RawMessage(`{"locked":true,"seq":5}`)},
		{200, json.RawMessage(`{"results":[{"output":"` + jsonText(t, c.exec("recall", `{"id":"r5"}`)) + `","status":200}]}`)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batch answered\n%s\nwant\n%s", show(got), show(want))
	}
	if out := c.exec("recall", `{"id":"r5"}`); !strings.Contains(out, "no archived block") {
		t.Errorf("the batch's lock did not hold: %q", out)
	}
	// It stops after the first answer that is not 2xx (the lock of a seq never archived).
	got = batchAnswers(t, c.do("POST", PathBatch, `{"requests":[
		{"method":"POST","path":"/debug/lock","body":{"seq":99,"locked":true}},
		{"method":"POST","path":"/debug/lock","body":{"seq":5,"locked":false}}]}`))
	want = []batchAnswer{{404, json.RawMessage(`{"error":"not found"}`)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("failing batch answered %s; want %s", show(got), show(want))
	}
	if out := c.exec("recall", `{"id":"r5"}`); !strings.Contains(out, "no archived block") {
		t.Errorf("a request after the failed one ran: %q", out)
	}
	// An answer that is not JSON comes as a JSON string.
	got = batchAnswers(t, c.do("POST", PathBatch, `{"requests":[{"method":"GET","path":"/debug/nothing"}]}`))
	want = []batchAnswer{{404, json.RawMessage(`"404 page not found\n"`)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unknown debug path in a batch: %s", show(got))
	}
	check(t, "empty batch", c.do("POST", PathBatch, `{"requests":[]}`), 200, `{"responses":[]}`)
	check(t, "no requests", c.do("POST", PathBatch, `{}`), 200, `{"responses":[]}`)
	for _, body := range []string{
		``, `[]`, `{"requests":{}}`, `{"requests":[null]}`, `{"requests":[1]}`,
		`{"requests":[{"path":"/debug/requests"}]}`,
		`{"requests":[{"method":"PUT","path":"/debug/requests"}]}`,
		`{"requests":[{"method":"GET","path":"/internal/v1/recall/blocks"}]}`,
		`{"requests":[{"method":"POST","path":"/internal/v1/tool/exec","body":{}}]}`,
		`{"requests":[{"method":"GET","path":"/debug/../internal/v1/recall/blocks"}]}`,
		`{"requests":[{"method":"GET","path":"http://other/debug/requests"}]}`,
		`{"requests":[{"method":"POST","path":"/debug/batch","body":{}}]}`,
		`{"requests":[{"method":"POST","path":"/debug/lock","body":{"seq":5,"locked":false}},{"method":"GET"}]}`,
	} {
		check(t, "bad batch "+body, c.do("POST", PathBatch, body), 400, "")
	}
	// None of a bad batch ran: the block is still locked.
	if out := c.exec("recall", `{"id":"r5"}`); !strings.Contains(out, "no archived block") {
		t.Errorf("a bad batch ran a request: %q", out)
	}
	r := c.do("GET", PathBatch, "")
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET %s: %d, Allow %q", PathBatch, r.status, r.header.Get("Allow"))
	}
	check(t, "batch without token", c.doBytes("POST", PathBatch, []byte(`{"requests":[]}`), ""), 401, `{"error":"unauthorized"}`)
	// The request log holds none of the batch's requests.
	for _, entry := range c.do("GET", PathRequests, "").json(t)["requests"].([]any) {
		if strings.Contains(entry.(string), "/debug/") {
			t.Errorf("request log holds %q", entry)
		}
	}
}

// jsonText returns s as it reads inside a JSON string written by encoding/json.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1 : len(b)-1])
}

// show returns v as JSON, for a failure's message.
func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

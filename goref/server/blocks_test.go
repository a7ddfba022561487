package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"recallref/archive"
	"recallref/recall"
)

// blocksSince reads /blocks?since=tag, with If-None-Match: tag as a client
// of the extension sends it unless bare.
func (c *client) blocksSince(tag string, bare bool) response {
	c.t.Helper()
	h := http.Header{}
	if !bare {
		h.Set("If-None-Match", tag)
	}
	return c.doHeaders("GET", PathBlocks+"?since="+url.QueryEscape(tag), h)
}

// answers returns the answers of /blocks that GET /debug/answers lists.
func (c *client) answers() []string {
	c.t.Helper()
	var doc struct {
		Answers []string `json:"answers"`
	}
	if err := json.Unmarshal([]byte(c.do("GET", PathAnswers, "").body), &doc); err != nil {
		c.t.Fatal(err)
	}
	return doc.Answers
}

// checkBlocks checks a 200 of /blocks: its ETag and its JSON body.
func checkBlocks(t *testing.T, what string, r response, tag, want string) {
	t.Helper()
	check(t, what, r, 200, want)
	if got := r.header.Get("ETag"); got != tag {
		t.Errorf("%s: ETag %q; want %s", what, got, tag)
	}
}

func TestBlocksSince(t *testing.T) {
	c := newServer(t, 1, "")
	empty := c.blocksTag()
	c.archive("a", "one <b>", false)
	one := c.blocksTag()
	for _, bare := range []bool{false, true} {
		r := c.blocksSince(one, bare)
		if r.status != 304 || r.body != "" || r.header.Get("ETag") != one {
			t.Errorf("since the current tag (bare %v): %d %q, ETag %q; want 304", bare, r.status, r.body, r.header.Get("ETag"))
		}
	}
	r := c.blocksSince(empty, false)
	checkBlocks(t, "one block archived", r, one, fmt.Sprintf(`{"since":%q,"blocks":[{"seq":1,"label":"a","content":"one <b>"}],"gone":[]}`, empty))
	if !strings.Contains(r.body, `\u003cb\u003e`) {
		t.Errorf("delta %s is not encoding/json's HTML-escaped form", r.body)
	}

	c.archive("b", "two", false)
	c.archive("hidden", "three", true)
	c.do("POST", PathLock, `{"seq":1,"locked":true}`)
	now := c.blocksTag()
	checkBlocks(t, "a lock, an archive and a locked archive", c.blocksSince(one, false), now,
		fmt.Sprintf(`{"since":%q,"blocks":[{"seq":2,"label":"b","content":"two"}],"gone":[1]}`, one))
	checkBlocks(t, "since the empty set", c.blocksSince(empty, true), now,
		fmt.Sprintf(`{"since":%q,"blocks":[{"seq":2,"label":"b","content":"two"}],"gone":[]}`, empty))

	// Locked and unlocked again, locked then archived: no net change.
	c.do("POST", PathLock, `{"seq":1,"locked":false}`)
	c.do("POST", PathLock, `{"seq":3,"locked":false}`)
	c.do("POST", PathLock, `{"seq":3,"locked":true}`)
	c.do("POST", PathLock, `{"seq":2,"locked":true}`)
	back := c.blocksTag()
	checkBlocks(t, "back as it was", c.blocksSince(one, false), back, fmt.Sprintf(`{"since":%q,"blocks":[],"gone":[]}`, one))
	checkBlocks(t, "gone since", c.blocksSince(now, false), back,
		fmt.Sprintf(`{"since":%q,"blocks":[{"seq":1,"label":"a","content":"one \u003cb\u003e"}],"gone":[2]}`, now))

	full := `{"blocks":[{"seq":1,"label":"a","content":"one <b>"}]}`
	other := newServer(t, 1, "").blocksTag()
	gen := strings.TrimSuffix(back[strings.LastIndex(back, "-")+1:], `"`)
	future := strings.Replace(back, "-"+gen+`"`, "-99"+gen+`"`, 1)
	padded := strings.Replace(one, "-", "-0", 1)
	for _, tag := range []string{other, future, padded, "W/" + one, strings.Trim(one, `"`), "", "*", `"x"`} {
		checkBlocks(t, "unknown tag "+tag, c.blocksSince(tag, true), back, full)
	}
	// The first since counts; other query parameters are ignored.
	checkBlocks(t, "two since", c.doHeaders("GET", PathBlocks+"?x=1&since="+url.QueryEscape(now)+"&since="+url.QueryEscape(back), nil), back,
		fmt.Sprintf(`{"since":%q,"blocks":[{"seq":1,"label":"a","content":"one \u003cb\u003e"}],"gone":[2]}`, now))

	// A reset forgets the history: a tag from before it gets the full body.
	c.do("POST", PathReset, "")
	c.archive("c", "four", false)
	after := c.blocksTag()
	checkBlocks(t, "since a tag from before the reset", c.blocksSince(back, false), after, `{"blocks":[{"seq":1,"label":"c","content":"four"}]}`)
	if got, want := c.answers(), []string{"full", "full"}; !slices.Equal(got, want) {
		t.Errorf("answers after the reset: %q; want %q", got, want)
	}
}

func TestBlocksSinceHistory(t *testing.T) {
	a := archive.New(1)
	a.SetHistory(2)
	srv := httptest.NewServer(New(a, Options{}))
	t.Cleanup(srv.Close)
	c := &client{t, srv.URL, ""}
	tags := []string{c.blocksTag()}
	for i := 0; i < 3; i++ {
		c.archive("l", "c", false)
		tags = append(tags, c.blocksTag())
	}
	c.archive("locked", "c", true) // a generation, not a change
	now := c.blocksTag()
	for i, tag := range tags {
		r := c.blocksSince(tag, false)
		if delta := strings.Contains(r.body, `"since"`); delta != (i >= 1) {
			t.Errorf("since the tag after %d archives: delta %v; want one for the last 2 changes only (%s)", i, delta, r.body)
		}
		if r.status != 200 || r.header.Get("ETag") != now {
			t.Errorf("since %s: %d, ETag %q", tag, r.status, r.header.Get("ETag"))
		}
	}
	if got := c.answers(); !slices.Equal(got[len(got)-4:], []string{"full", "delta", "delta", "delta"}) {
		t.Errorf("answers %q", got)
	}
	a.SetHistory(0)
	c.archive("l", "c", false)
	checkBlocks(t, "no history", c.blocksSince(tags[3], false), c.blocksTag(), "")
	if got := c.answers(); got[len(got)-1] != "full" {
		t.Errorf("no history: answered %q", got[len(got)-1])
	}
}

func TestBlocksNoSince(t *testing.T) {
	for _, opts := range []Options{{NoSince: true}, {NoETag: true}} {
		c := newServerOpts(t, 1, opts)
		tag := `"x"`
		if !opts.NoETag {
			tag = c.blocksTag()
		}
		c.archive("a", "one", false)
		now := ""
		if !opts.NoETag {
			now = c.blocksTag()
			if r := c.blocksSince(now, false); r.status != 304 {
				t.Errorf("%+v: since the current tag with If-None-Match: %d; want 304", opts, r.status)
			}
			checkBlocks(t, "bare since the current tag", c.blocksSince(now, true), now, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
		}
		r := c.blocksSince(tag, false)
		checkBlocks(t, fmt.Sprintf("%+v: since an old tag", opts), r, now, `{"blocks":[{"seq":1,"label":"a","content":"one"}]}`)
	}
}

func TestBlocksSinceToken(t *testing.T) {
	c := newServer(t, 1, "tok")
	tag := c.blocksTag()
	c.archive("a", "one", false)
	r := c.send("GET", PathBlocks+"?since="+url.QueryEscape(tag), nil, "", nil)
	check(t, "since without token", r, 401, `{"error":"unauthorized"}`)
	if r := c.blocksSince(tag, false); r.status != 200 || !strings.Contains(r.body, `"since"`) {
		t.Errorf("since with token: %d %s; want a delta", r.status, r.body)
	}
}

// TestBlocksSinceConsistent reads /blocks, in full and as deltas, while
// blocks are archived, locked and unlocked: each delta applied to the set
// its since named gives the set its ETag names.
func TestBlocksSinceConsistent(t *testing.T) {
	h := New(archive.New(1), Options{})
	get := func(target string) (int, string, []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		return rec.Code, rec.Header().Get("ETag"), rec.Body.Bytes()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			body := fmt.Sprintf(`{"label":"l","content":"c%d","locked":%v}`, i, i%5 == 0)
			if i%3 == 2 {
				body = fmt.Sprintf(`{"seq":%d,"locked":%v}`, 1+i/2, i%2 == 0)
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", PathLock, strings.NewReader(body)))
				continue
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", PathArchive, strings.NewReader(body)))
		}
	}()
	var mu sync.Mutex
	sets := map[string][]recall.Block{} // by tag, from full reads
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := ""
			for i := 0; i < 200; i++ {
				var doc struct {
					Since  *string
					Blocks []recall.Block
					Gone   []int64
				}
				code, tag, body := get(PathBlocks + "?since=" + url.QueryEscape(last))
				if code == http.StatusNotModified {
					if tag != last {
						t.Errorf("304 with ETag %s since %s", tag, last)
					}
					continue
				}
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Errorf("body %q: %v", body, err)
					return
				}
				mu.Lock()
				if doc.Since == nil {
					sets[tag] = doc.Blocks
				} else if old, ok := sets[*doc.Since]; ok && *doc.Since == last {
					set := apply(old, doc.Blocks, doc.Gone)
					if want, ok := sets[tag]; ok && !reflect.DeepEqual(set, want) {
						t.Errorf("delta from %s to %s gives %v; the full read gave %v", last, tag, set, want)
					}
					sets[tag] = set
				} else {
					t.Errorf("a delta since %q for a request since %q", *doc.Since, last)
				}
				mu.Unlock()
				last = tag
				if i%7 == 0 {
					last = ""
				}
			}
		}()
	}
	wg.Wait()
	// Every set seen, brought up to date by a delta, is the current set.
	_, now, body := get(PathBlocks)
	var cur struct{ Blocks []recall.Block }
	if err := json.Unmarshal(body, &cur); err != nil {
		t.Fatal(err)
	}
	for tag, set := range sets {
		if tag == now {
			continue
		}
		var doc struct {
			Since  string
			Blocks []recall.Block
			Gone   []int64
		}
		_, _, body := get(PathBlocks + "?since=" + url.QueryEscape(tag))
		if err := json.Unmarshal(body, &doc); err != nil || doc.Since != tag {
			t.Fatalf("since %s: %s (%v); want a delta", tag, body, err)
		}
		if got := apply(set, doc.Blocks, doc.Gone); !reflect.DeepEqual(got, cur.Blocks) {
			t.Errorf("delta since %s: %v; the current set is %v", tag, got, cur.Blocks)
		}
	}
}

// apply returns set less the seqs gone, plus blocks, by increasing seq.
func apply(set, blocks []recall.Block, gone []int64) []recall.Block {
	out := slices.DeleteFunc(slices.Clone(set), func(b recall.Block) bool { return slices.Contains(gone, b.Seq) })
	out = append(out, blocks...)
	slices.SortFunc(out, func(x, y recall.Block) int { return cmp.Compare(x.Seq, y.Seq) })
	return out
}

// TestBlocksEncodedOnce checks that the full body of an unchanged set is
// written again from the parts kept, and made anew after a change.
func TestBlocksEncodedOnce(t *testing.T) {
	s := New(archive.New(1), Options{}).(*server)
	get := func() []byte {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", PathBlocks, nil))
		if n := rec.Header().Get("Content-Length"); n != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("Content-Length %s for a body of %d bytes", n, rec.Body.Len())
		}
		return rec.Body.Bytes()
	}
	s.store.Add("a", "one", false)
	first := get()
	kept := s.full.body
	if again := get(); string(again) != string(first) || &s.full.body[0] != &kept[0] {
		t.Errorf("a second read of an unchanged set made a new body")
	}
	// After each change, the body is the set as json.Encoder writes it, the
	// blocks encoded before reused where they are the same blocks.
	steps := []struct {
		what   string
		change func()
	}{
		{"an add", func() { s.store.Add("b", "two <b>&\u2028", false) }},
		{"a lock", func() { s.store.SetLocked(1, true) }},
		{"an unlock", func() { s.store.SetLocked(1, false) }},
		{"a reset", func() { s.store.Reset(1) }},
		{"an add after a reset", func() { s.store.Add("a", "other", false) }},
		{"the same seq again", func() { s.store.Reset(1); s.store.Add("a", "one more", false) }},
	}
	for _, step := range steps {
		step.change()
		blocks, _ := s.store.Snapshot()
		var want bytes.Buffer
		_ = json.NewEncoder(&want).Encode(map[string][]recall.Block{"blocks": blocks})
		if got := get(); string(got) != want.String() {
			t.Errorf("a read after %s: %s; want %s", step.what, got, want.String())
		}
	}
}

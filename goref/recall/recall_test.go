package recall

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testArchive is an Archive over blocks in memory that records its reads.
type testArchive struct {
	blocks []Block // by increasing seq
	locked map[int64]bool
	gets   []int64
	alls   int
}

func (a *testArchive) Get(seq int64) (Block, bool) {
	a.gets = append(a.gets, seq)
	for _, b := range a.blocks {
		if b.Seq == seq && !a.locked[seq] {
			return b, true
		}
	}
	return Block{}, false
}

func (a *testArchive) All() []Block {
	a.alls++
	var out []Block
	for _, b := range a.blocks {
		if !a.locked[b.Seq] {
			out = append(out, b)
		}
	}
	return out
}

func TestRecallIDToSeq(t *testing.T) {
	tests := []struct {
		id   string
		seq  int64
		ok   bool
		note string
	}{
		{"7", 7, true, "bare digits"},
		{"r7", 7, true, ""},
		{"R7", 7, true, "upper-case prefix"},
		{"rR7", 7, true, "r then R"},
		{" r 7 ", 7, true, "spaces around and after the prefix"},
		{"r007", 7, true, "leading zeros"},
		{"\t\nr7\r\n", 7, true, "ASCII white space"},
		{"\u00a0r7\u3000", 7, true, "Unicode spaces (unicode.IsSpace)"},
		{"\u0085R 7\u2029", 7, true, "NEL and paragraph separator are spaces"},
		{"r9223372036854775807", 9223372036854775807, true, "MaxInt64"},
		{"r0009223372036854775807", 9223372036854775807, true, "MaxInt64 with zeros"},
		{"", 0, false, "empty"},
		{"r", 0, false, "prefix only"},
		{"rR", 0, false, "prefixes only"},
		{"Rr7", 0, false, "R then r"},
		{"rr7", 0, false, "two r"},
		{"RR7", 0, false, "two R"},
		{"R r7", 0, false, "R, space, r"},
		{"r-7", 0, false, "negative"},
		{"-7", 0, false, "negative, no prefix"},
		{"r+7", 0, false, "plus sign"},
		{"r0", 0, false, "zero"},
		{"r000", 0, false, "zeros"},
		{"r7a", 0, false, "trailing letter"},
		{"r 7 7", 0, false, "inner space"},
		{"r1_000", 0, false, "underscore"},
		{"r0x7", 0, false, "hex"},
		{"r7.0", 0, false, "decimal point"},
		{"r99999999999999999999", 0, false, "past int64"},
		{"r9223372036854775808", 0, false, "MaxInt64+1"},
		{"r\u0667", 0, false, "Arabic-Indic digit"},
		{"r\uff17", 0, false, "fullwidth digit"},
		{"\u200br7", 0, false, "zero width space is not a space"},
		{`"r7"`, 0, false, "quoted"},
		{"\ufffd", 0, false, "replacement character"},
	}
	for _, tt := range tests {
		seq, ok := recallIDToSeq(tt.id)
		if seq != tt.seq || ok != tt.ok {
			t.Errorf("recallIDToSeq(%q) = %d, %v; want %d, %v (%s)", tt.id, seq, ok, tt.seq, tt.ok, tt.note)
		}
	}
}

func TestRecallTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		note string
	}{
		{"", nil, "empty"},
		{"hello", []string{"hello"}, ""},
		{"Hello WORLD", []string{"hello", "world"}, "lowered"},
		{"İstanbul", []string{"istanbul"}, "İ lowers to i"},
		{"ΣΑΣ ab", []string{"ab"}, "Greek is outside words"},
		{"abΣcd", []string{"ab", "cd"}, "Σ (lowered to σ) cuts"},
		{"a÷b", []string{"a÷b"}, "÷ U+00F7 is kept"},
		{"a×b", nil, "× U+00D7 cuts (and a, b are too short)"},
		{"ab×cd", []string{"ab", "cd"}, "× cuts"},
		{"straße", []string{"stra"}, "ß cuts"},
		{"CAFÉ", []string{"café"}, "É lowers to é"},
		{"ÀÿŸe", []string{"àÿÿe"}, "Ÿ U+0178 lowers to ÿ U+00FF"},
		{"\u212aey", []string{"key"}, "Kelvin sign lowers to k"},
		{"foo_bar", []string{"foo", "bar"}, "underscore cuts"},
		{"a b cd", []string{"cd"}, "fields under 2 runes dropped"},
		{"é éa", []string{"éa"}, "runes, not bytes"},
		{"Foo bar FOO baz bar", []string{"foo", "bar", "baz"}, "dedupe keeps first"},
		{"r7 42", []string{"r7", "42"}, "digits"},
		{"hello!!!, (world)?", []string{"hello", "world"}, "punctuation"},
		{"ＡＢ", nil, "fullwidth letters cut"},
		{"x", nil, "one rune"},
		{"  \t ", nil, "spaces"},
		{"<b>bold</b> &amp;", []string{"bold", "amp"}, "tags and entities"},
	}
	for _, tt := range tests {
		if got := recallTokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("recallTokens(%q) = %q; want %q (%s)", tt.in, got, tt.want, tt.note)
		}
	}
}

func TestExcerpt(t *testing.T) {
	e160 := strings.Repeat("é", 160)
	tests := []struct {
		in, want, note string
	}{
		{"", "", "empty"},
		{" \n\t\n  ", "", "blank lines only"},
		{"first\nsecond", "first", ""},
		{"\n  \n\t\n  line  \nnext", "line", "blank lines skipped, trimmed"},
		{"\r\nabc", "abc", `"\r" alone is blank`},
		{"a\rb\nc", "a\rb", `split on "\n" only`},
		{"a\u2028b", "a\u2028b", "U+2028 does not split"},
		{"\u00a0x\u0085", "x", "Unicode spaces trimmed"},
		{e160, e160, "160 runes kept"},
		{e160 + "é", e160 + "…", "161 runes cut"},
		{"  " + e160 + "x  \nnext", e160 + "…", "cut after trimming"},
		{strings.Repeat("a", 160) + "\u00a0\u00a0", strings.Repeat("a", 160), "trim before counting"},
		{strings.Repeat("😀", 200), strings.Repeat("😀", 160) + "…", "4-byte runes"},
	}
	for _, tt := range tests {
		if got := excerpt(tt.in); got != tt.want {
			t.Errorf("excerpt(%q) = %q; want %q (%s)", tt.in, got, tt.want, tt.note)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	deep := func(n int) string {
		return `{"id":"r1","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	tests := []struct {
		args string
		want map[string]any
		note string
	}{
		{`{"id":"r1"}`, map[string]any{"id": "r1"}, ""},
		{` {"id" : "r1"} `, map[string]any{"id": "r1"}, "white space"},
		{`null`, map[string]any{}, "null"},
		{`[]`, map[string]any{}, "array"},
		{`"x"`, map[string]any{}, "string"},
		{`1`, map[string]any{}, "number"},
		{`1e400`, map[string]any{}, "number out of range"},
		{``, map[string]any{}, "empty"},
		{`{`, map[string]any{}, "truncated"},
		{`{"id":"r1",}`, map[string]any{}, "trailing comma"},
		{`{"id":"r1"} x`, map[string]any{}, "trailing data"},
		{"\ufeff{}", map[string]any{}, "BOM"},
		{`{'id':'r1'}`, map[string]any{}, "single quotes"},
		{`{"id":"r1","x":1e400}`, map[string]any{}, "partly filled before the error"},
		{`{"id":"r1","id":"r2"}`, map[string]any{"id": "r2"}, "repeated key keeps the last"},
		{`{"ID":"r1"}`, map[string]any{"ID": "r1"}, "keys are exact"},
		{`{"id":"\ud800"}`, map[string]any{"id": "\ufffd"}, "lone high surrogate"},
		{`{"id":"\udc00\ud800"}`, map[string]any{"id": "\ufffd\ufffd"}, "reversed pair"},
		{`{"id":"\ud83d\ude00"}`, map[string]any{"id": "😀"}, "surrogate pair"},
		{"{\"id\":\"\xffr1\"}", map[string]any{"id": "\ufffdr1"}, "invalid UTF-8 byte"},
		{`{"limit":2.9,"b":true,"n":null}`, map[string]any{"limit": 2.9, "b": true, "n": nil}, "numbers are float64"},
		{deep(9999), map[string]any{"id": "r1", "x": nest(9999)}, "deepest nesting Go accepts"},
		{deep(10000), map[string]any{}, "nesting past Go's limit"},
	}
	for _, tt := range tests {
		got := decodeArgs(tt.args)
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
			note := tt.args
			if len(note) > 40 {
				note = note[:40] + "..."
			}
			t.Errorf("decodeArgs(%q) = %#v; want %#v (%s)", note, got, tt.want, tt.note)
		}
	}
}

// nest returns n nested empty arrays as json.Unmarshal decodes them into any.
func nest(n int) any {
	v := []any{}
	for i := 1; i < n; i++ {
		v = []any{v}
	}
	return v
}

func TestRecall(t *testing.T) {
	newArchive := func() *testArchive {
		return &testArchive{
			blocks: []Block{
				{7, "notes", "line one\nline two\n"},
				{8, "", "x"},
				{9, "<b>&amp;", ""},
				{10, "secret", "hidden"},
			},
			locked: map[int64]bool{10: true},
		}
	}
	tests := []struct {
		args string
		want string
		gets []int64 // the seqs read with Get; nil: the archive is not read
	}{
		// Missing id: absent, not a string, blank, bad JSON.
		{`{}`, textMissingID, nil},
		{`{"id":7}`, textMissingID, nil},
		{`{"id":null}`, textMissingID, nil},
		{`{"id":["r7"]}`, textMissingID, nil},
		{`{"id":""}`, textMissingID, nil},
		{`{"id":" \t\n\u00a0"}`, textMissingID, nil},
		{`{"ID":"r7"}`, textMissingID, nil},
		{`not json`, textMissingID, nil},
		{`null`, textMissingID, nil},
		{`["r7"]`, textMissingID, nil},
		{`{"id":"r7","x":1e400}`, textMissingID, nil},
		// Found, with prefix and space variants and leading zeros.
		{`{"id":"r7"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"R7"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"rR7"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":" r 7 "}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"r007"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"7"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"r1","id":"r7"}`, "[r7] notes\nline one\nline two\n", []int64{7}},
		{`{"id":"r8"}`, "[r8]\nx", []int64{8}},
		{`{"id":"r9"}`, "[r9] <b>&amp;\n", []int64{9}},
		// Malformed: not found, archive not read; the id cited untrimmed.
		{`{"id":"Rr7"}`, `no archived block "Rr7"`, nil},
		{`{"id":"r-7"}`, `no archived block "r-7"`, nil},
		{`{"id":"r+7"}`, `no archived block "r+7"`, nil},
		{`{"id":"r0"}`, `no archived block "r0"`, nil},
		{`{"id":"r7a"}`, `no archived block "r7a"`, nil},
		{`{"id":"r99999999999999999999"}`, `no archived block "r99999999999999999999"`, nil},
		{`{"id":"\"r7\""}`, `no archived block "\"r7\""`, nil},
		{`{"id":"\ud800"}`, "no archived block \"\ufffd\"", nil},
		{`{"id":"r7\u0000\u0007\t\u00ad\u2028"}`, `no archived block "r7\x00\a\t\u00ad\u2028"`, nil},
		// Well formed but absent, or locked.
		{`{"id":" r99 "}`, `no archived block " r99 "`, []int64{99}},
		{`{"id":"r10"}`, `no archived block "r10"`, []int64{10}},
		{`{"id":"r9223372036854775807"}`, `no archived block "r9223372036854775807"`, []int64{9223372036854775807}},
	}
	for _, tt := range tests {
		a := newArchive()
		if got := Recall(tt.args, a); got != tt.want {
			t.Errorf("Recall(%q) = %q; want %q", tt.args, got, tt.want)
		}
		if !slices.Equal(a.gets, tt.gets) || a.alls != 0 {
			t.Errorf("Recall(%q) read Get %v and All %d times; want Get %v only", tt.args, a.gets, a.alls, tt.gets)
		}
	}
}

func searchArchive() *testArchive {
	return &testArchive{
		blocks: []Block{
			{1, "Go notes", "Hello World\nsecond"},
			{2, "", "  \n\n   hello   there  \nx"},
			{3, "HELLO", ""},
			{4, "café", "Crème brûlée recipe"},
			{5, "istanbul", "trip"},
			{6, "x", strings.Repeat("é", 161)},
			{7, "y", "foo_bar baz"},
			{8, "<b>tag</b>", "&amp; entity"},
			{9, "hello", "locked hello"},
		},
		locked: map[int64]bool{9: true},
	}
}

func TestRecallSearch(t *testing.T) {
	tests := []struct {
		args string
		want string
		read bool // All was called
	}{
		// Missing query: absent, not a string, blank, bad JSON.
		{`{}`, textMissingQuery, false},
		{`{"query":5}`, textMissingQuery, false},
		{`{"query":null}`, textMissingQuery, false},
		{`{"query":"  \t"}`, textMissingQuery, false},
		{`{"Query":"hello"}`, textMissingQuery, false},
		{`{"query":"hello","limit":1e400}`, textMissingQuery, false},
		{`[{"query":"hello"}]`, textMissingQuery, false},
		// No terms: no match, archive not read.
		{`{"query":"a b c"}`, `no archived block matches "a b c"`, false},
		{`{"query":"ΣΑΣ"}`, `no archived block matches "ΣΑΣ"`, false},
		{`{"query":"!?"}`, `no archived block matches "!?"`, false},
		{`{"query":" x "}`, `no archived block matches " x "`, false},
		// No result.
		{`{"query":"zzz"}`, `no archived block matches "zzz"`, true},
		{`{"query":"say \"hi\""}`, `no archived block matches "say \"hi\""`, true},
		{`{"query":"locked"}`, `no archived block matches "locked"`, true},
		// Results: label 2, content 1; ties by seq, highest first.
		{`{"query":"hello"}`, "3 of 3 matching blocks for \"hello\":" +
			"\n[r3] HELLO (score 2)" +
			"\n[r2] (score 1)\n  hello   there" +
			"\n[r1] Go notes (score 1)\n  Hello World", true},
		{`{"query":"hello world"}`, "3 of 3 matching blocks for \"hello world\":" +
			"\n[r3] HELLO (score 2)" +
			"\n[r1] Go notes (score 2)\n  Hello World" +
			"\n[r2] (score 1)\n  hello   there", true},
		{`{"query":"hello!!!, (WORLD)? hello"}`, "3 of 3 matching blocks for \"hello!!!, (WORLD)? hello\":" +
			"\n[r3] HELLO (score 2)" +
			"\n[r1] Go notes (score 2)\n  Hello World" +
			"\n[r2] (score 1)\n  hello   there", true},
		{`{"query":"hello","limit":1}`, "1 of 3 matching blocks for \"hello\":" +
			"\n[r3] HELLO (score 2)", true},
		// Case and accents; a term in both label and content adds 3.
		{`{"query":"CAFÉ crème"}`, "1 of 1 matching blocks for \"CAFÉ crème\":" +
			"\n[r4] café (score 3)\n  Crème brûlée recipe", true},
		{`{"query":"brûlée café"}`, "1 of 1 matching blocks for \"brûlée café\":" +
			"\n[r4] café (score 3)\n  Crème brûlée recipe", true},
		{`{"query":"İSTANBUL"}`, "1 of 1 matching blocks for \"İSTANBUL\":" +
			"\n[r5] istanbul (score 2)\n  trip", true},
		{`{"query":"Σtrip"}`, "1 of 1 matching blocks for \"Σtrip\":" +
			"\n[r5] istanbul (score 1)\n  trip", true},
		// Underscore cuts.
		{`{"query":"foo_bar"}`, "1 of 1 matching blocks for \"foo_bar\":" +
			"\n[r7] y (score 2)\n  foo_bar baz", true},
		// Bounded excerpt.
		{`{"query":"éé"}`, "1 of 1 matching blocks for \"éé\":" +
			"\n[r6] x (score 1)\n  " + strings.Repeat("é", 160) + "…", true},
		// Tags and entities are plain text.
		{`{"query":"<b>tag</b> &amp;"}`, "1 of 1 matching blocks for \"<b>tag</b> &amp;\":" +
			"\n[r8] <b>tag</b> (score 3)\n  &amp; entity", true},
		// The query is cited untrimmed, with Go's quoting.
		{`{"query":"  zzz\u0007\u00e9\ud800 "}`, "no archived block matches \"  zzz\\aé\ufffd \"", true},
	}
	for _, tt := range tests {
		a := searchArchive()
		if got := RecallSearch(tt.args, a); got != tt.want {
			t.Errorf("RecallSearch(%q) =\n%q\nwant\n%q", tt.args, got, tt.want)
		}
		if read := a.alls == 1; read != tt.read || a.alls > 1 || len(a.gets) != 0 {
			t.Errorf("RecallSearch(%q) read All %d times and Get %v; want All read: %v", tt.args, a.alls, a.gets, tt.read)
		}
	}
}

func TestRecallSearchLimit(t *testing.T) {
	a := &testArchive{}
	for i := 0; i < 25; i++ {
		a.blocks = append(a.blocks, Block{int64(101 + i), "sim", fmt.Sprintf("similar block %d", i)})
	}
	tests := []struct {
		limit string // the "limit" member, "" for none
		shown int
	}{
		{"", 5},
		{`1`, 1},
		{`2.9`, 2},
		{`-2.9`, 5},
		{`-3`, 5},
		{`0`, 5},
		{`0.99`, 5},
		{`20`, 20},
		{`20.5`, 20},
		{`21`, 20},
		{`50`, 20},
		{`1e300`, 5},      // int(f) is MinInt64 on amd64
		{`9.3e18`, 5},     // past int64: MinInt64
		{`-1e300`, 5},     // MinInt64
		{`"3"`, 5},        // text ignored
		{`true`, 5},       // other types ignored
		{`null`, 5},       //
		{`[3]`, 5},        //
		{`{"n":3}`, 5},    //
		{`3e0`, 3},        // any JSON number
		{`1.5e1`, 15},     //
		{`-0`, 5},         //
		{`1e-300`, 5},     // truncates to 0
		{`99.999999`, 20}, //
	}
	for _, tt := range tests {
		args := `{"query":"similar"}`
		if tt.limit != "" {
			args = `{"query":"similar","limit":` + tt.limit + `}`
		}
		got := RecallSearch(args, a)
		var want strings.Builder
		fmt.Fprintf(&want, "%d of 25 matching blocks for \"similar\":", tt.shown)
		for i := 0; i < tt.shown; i++ {
			fmt.Fprintf(&want, "\n[r%d] sim (score 1)\n  similar block %d", 125-i, 24-i)
		}
		if got != want.String() {
			t.Errorf("RecallSearch(%s) =\n%q\nwant\n%q", args, got, want.String())
		}
	}
}

func TestRecallSearchOrder(t *testing.T) {
	// Blocks deliberately out of seq order in All: ordering is by score,
	// then seq, whatever the archive's order.
	a := &testArchive{blocks: []Block{
		{5, "", "alpha"},
		{50, "", "alpha beta"},
		{2, "alpha", ""},
		{40, "", "beta"},
		{3, "beta", "alpha"},
	}}
	got := RecallSearch(`{"query":"alpha beta","limit":20}`, a)
	want := "5 of 5 matching blocks for \"alpha beta\":" +
		"\n[r3] beta (score 3)\n  alpha" +
		"\n[r50] (score 2)\n  alpha beta" +
		"\n[r2] alpha (score 2)" +
		"\n[r40] (score 1)\n  beta" +
		"\n[r5] (score 1)\n  alpha"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		b     Block
		terms []string
		want  int
	}{
		{Block{1, "", ""}, []string{"ab"}, 0},
		{Block{1, "", "AB"}, []string{"ab"}, 1},
		{Block{1, "AB", ""}, []string{"ab"}, 2},
		{Block{1, "ab", "xaby"}, []string{"ab"}, 3},
		{Block{1, "othello", "hello"}, []string{"hello", "ot"}, 5},
		{Block{1, "İ", "\u212a"}, []string{"i", "k"}, 3}, // lowered with Go's table
	}
	for _, tt := range tests {
		if got := score(tt.b, tt.terms); got != tt.want {
			t.Errorf("score(%+v, %q) = %d; want %d", tt.b, tt.terms, got, tt.want)
		}
	}
}

func TestTexts(t *testing.T) {
	if textMissingID != `recall needs an "id", such as "r7"` {
		t.Errorf("textMissingID = %q", textMissingID)
	}
	if textMissingQuery != `recall_search needs a "query"` {
		t.Errorf("textMissingQuery = %q", textMissingQuery)
	}
	tests := []struct{ got, want string }{
		{header(Block{7, "", "c"}), "[r7]"},
		{header(Block{7, " l ", "c"}), "[r7]  l "},
		{textBlock(Block{12, "lab", " c\n"}), "[r12] lab\n c\n"},
		{textBlock(Block{12, "", ""}), "[r12]\n"},
		{textNotFound(" r7 "), `no archived block " r7 "`},
		{textNotFound("\x00é\U0001F600\u0378"), `no archived block "\x00é` + "\U0001F600" + `\u0378"`},
		{textNoMatch(`a"b\`), `no archived block matches "a\"b\\"`},
		{Block{Seq: 42}.ID(), "r42"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q; want %q", i, tt.got, tt.want)
		}
	}
}

func TestTools(t *testing.T) {
	a := searchArchive()
	tests := []struct {
		name, args, want string
		ok               bool
	}{
		{"recall", `{"id":"r3"}`, "[r3] HELLO\n", true},
		{"recall_search", `{"query":"trip"}`, "1 of 1 matching blocks for \"trip\":\n[r5] istanbul (score 1)\n  trip", true},
		{"Recall", `{"id":"r3"}`, "", false},
		{"recall ", `{"id":"r3"}`, "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		tool, ok := Tools[tt.name]
		if ok != tt.ok {
			t.Errorf("Tools[%q] present = %v; want %v", tt.name, ok, tt.ok)
			continue
		}
		if ok {
			if got := tool(tt.args, a); got != tt.want {
				t.Errorf("Tools[%q](%q) = %q; want %q", tt.name, tt.args, got, tt.want)
			}
		}
	}
}

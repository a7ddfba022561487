package main

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestServe checks each op against the standard library function it names.
func TestServe(t *testing.T) {
	const text = "À<İ>\u0085 \u00a0x\x00"
	quoted, _ := json.Marshal(text)
	js := string(quoted)
	f := -1.5e19
	bits := strconv.FormatUint(math.Float64bits(f), 16)
	in := []string{
		`{"op":"lower","s":` + js + `}`,
		`{"op":"trimspace","s":` + js + `}`,
		`{"op":"quote","s":` + js + `}`,
		`{"op":"isspace","s":" x\u0085"}`,
		`{"op":"isprint","s":"a\u00ad"}`,
		`{"op":"unmarshal","s":"{\"a\":1.5,\"b\":\"x\",\"c\":null,\"d\":[],\"e\":true}"}`,
		`{"op":"unmarshal","s":"[1]"}`,
		`{"op":"f2i","bits":"` + bits + `"}`,
		`{"op":"f2i","bits":"x"}`,
		`{"op":"nope"}`,
		`not json`,
		`{"op":"lower","s":"LAST"}`, // no final newline
	}
	want := []any{
		map[string]any{"r": strings.ToLower(text)},
		map[string]any{"r": strings.TrimSpace(text)},
		map[string]any{"r": strconv.Quote(text)},
		map[string]any{"r": []bool{unicode.IsSpace(' '), unicode.IsSpace('x'), unicode.IsSpace(0x85)}},
		map[string]any{"r": []bool{strconv.IsPrint('a'), strconv.IsPrint(0xad)}},
		map[string]any{"ok": true, "m": map[string]any{
			"a": map[string]any{"type": "float64", "value": map[string]string{"g": "1.5", "bits": "3ff8000000000000"}},
			"b": map[string]any{"type": "string", "value": "x"},
			"c": map[string]any{"type": "nil", "value": nil},
			"d": map[string]any{"type": "other", "value": nil},
			"e": map[string]any{"type": "bool", "value": true},
		}},
		map[string]any{"ok": false, "m": map[string]any{}},
		map[string]any{"r": strconv.Itoa(f2i(f))},
		nil, // an error
		map[string]any{"error": `unknown op "nope"`},
		nil,
		map[string]any{"r": "last"},
	}
	var out bytes.Buffer
	if err := serve(strings.NewReader(strings.Join(in, "\n")), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d answers for %d requests: %q", len(lines), len(want), lines)
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("answer %d %q: %v", i, line, err)
		}
		if want[i] == nil {
			if _, ok := got["error"].(string); !ok || len(got) != 1 {
				t.Errorf("answer to %s: %s; want an error", in[i], line)
			}
			continue
		}
		exp := roundTrip(t, want[i])
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("answer to %s: %s; want %v", in[i], line, exp)
		}
	}
	if !strings.Contains(lines[0], "<") {
		t.Errorf("HTML characters escaped: %s", lines[0])
	}
}

// roundTrip returns v as it decodes from its JSON.
func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

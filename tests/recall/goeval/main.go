// Command goeval is the Go oracle of the differential tests of recall/_go: it
// reads one JSON request per line on standard input and writes one JSON answer
// per line on standard output, flushed after each.
//
// Requests ({"op": ..., "s": ..., "bits": ...}) and answers:
//
//	lower      {"r": strings.ToLower(s)}
//	trimspace  {"r": strings.TrimSpace(s)}
//	quote      {"r": strconv.Quote(s)}
//	isspace    {"r": [unicode.IsSpace(r) for each rune r of s]}
//	isprint    {"r": [strconv.IsPrint(r) for each rune r of s]}
//	unmarshal  {"ok": err == nil, "m": {key: {"type": T, "value": V}}} after
//	           json.Unmarshal([]byte(s), &m) with m map[string]any; T is string,
//	           float64, bool, nil or other; a float64 value is given as
//	           {"g": FormatFloat(f, 'g', -1, 64), "bits": "%016x" of its bits}
//	f2i        {"r": decimal int(f)} for f the float64 whose bits are the hex "bits"
//
// A request that cannot be read gets {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
)

type request struct {
	Op   string `json:"op"`
	S    string `json:"s"`
	Bits string `json:"bits"`
}

type typed struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type goFloat struct {
	G    string `json:"g"`
	Bits string `json:"bits"`
}

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goeval:", err)
		os.Exit(1)
	}
}

// serve answers each line of r on w, flushed after each.
func serve(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if err := enc.Encode(answer(line)); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func answer(line []byte) any {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return map[string]string{"error": err.Error()}
	}
	var r any
	switch req.Op {
	case "lower":
		r = strings.ToLower(req.S)
	case "trimspace":
		r = strings.TrimSpace(req.S)
	case "quote":
		r = strconv.Quote(req.S)
	case "isspace":
		r = runeBools(req.S, unicode.IsSpace)
	case "isprint":
		r = runeBools(req.S, strconv.IsPrint)
	case "unmarshal":
		return unmarshal(req.S)
	case "f2i":
		bits, err := strconv.ParseUint(req.Bits, 16, 64)
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		r = strconv.FormatInt(int64(f2i(math.Float64frombits(bits))), 10)
	default:
		return map[string]string{"error": fmt.Sprintf("unknown op %q", req.Op)}
	}
	return map[string]any{"r": r}
}

// f2i is Go's conversion int(f), kept out of line so that it runs at run time.
//
//go:noinline
func f2i(f float64) int { return int(f) }

func runeBools(s string, f func(rune) bool) []bool {
	bs := []bool{}
	for _, r := range s {
		bs = append(bs, f(r))
	}
	return bs
}

func unmarshal(s string) any {
	var m map[string]any
	err := json.Unmarshal([]byte(s), &m)
	res := map[string]typed{}
	for k, v := range m {
		t := typed{"other", nil}
		switch v := v.(type) {
		case string:
			t = typed{"string", v}
		case float64:
			t = typed{"float64", goFloat{strconv.FormatFloat(v, 'g', -1, 64), fmt.Sprintf("%016x", math.Float64bits(v))}}
		case bool:
			t = typed{"bool", v}
		case nil:
			t.Type = "nil"
		}
		res[k] = t
	}
	return map[string]any{"ok": err == nil, "m": res}
}

// Package recall implements the two recall tools of the contract
// (docs/contract.md): recall, which returns an archived block by id, and
// recall_search, which finds blocks by keywords.
//
// This package is the reference: every step uses the Go standard library
// function the contract names, so the contract's edge cases are Go's.
package recall

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Block is an archived block as the archive serves it.
type Block struct {
	Seq     int64  `json:"seq"`
	Label   string `json:"label"`
	Content string `json:"content"`
}

// ID returns the block's id, "r" followed by the decimal seq.
func (b Block) ID() string { return "r" + strconv.FormatInt(b.Seq, 10) }

// Archive is the tools' read access to the archive. Locked blocks are not
// readable: Get reports them absent and All leaves them out.
type Archive interface {
	// Get returns the readable block with this seq.
	Get(seq int64) (Block, bool)
	// All returns every readable block, by increasing seq.
	All() []Block
}

// The fixed texts and the limits of the contract.
const (
	textMissingID    = `recall needs an "id", such as "r7"`
	textMissingQuery = `recall_search needs a "query"`

	defaultLimit, maxLimit, excerptRunes = 5, 20, 160
)

// Tools maps each tool's name to the tool (its output for the JSON arguments args).
var Tools = map[string]func(args string, a Archive) string{
	"recall":        Recall,
	"recall_search": RecallSearch,
}

// decodeArgs decodes the tool arguments as json.Unmarshal into
// map[string]any does; any error, or null, gives an empty map.
func decodeArgs(args string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// Recall runs the recall tool. It reads the archive only through Get, and
// only for a well-formed id.
func Recall(args string, a Archive) string {
	id, _ := decodeArgs(args)["id"].(string)
	if strings.TrimSpace(id) == "" {
		return textMissingID
	}
	if seq, ok := recallIDToSeq(id); ok {
		if b, ok := a.Get(seq); ok {
			return textBlock(b)
		}
	}
	return textNotFound(id)
}

// recallIDToSeq parses a tolerant block id: spaces, an "r" prefix then an
// "R" prefix, spaces again, then one or more ASCII digits making an int64 of
// at least 1.
func recallIDToSeq(id string) (int64, bool) {
	s := strings.TrimSpace(id)
	s = strings.TrimPrefix(s, "r")
	s = strings.TrimPrefix(s, "R")
	s = strings.TrimSpace(s)
	seq, err := strconv.ParseInt(s, 10, 64)
	if err != nil || seq < 1 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	return seq, true
}

// hit is a block matched by a search, with its score.
type hit struct {
	block Block
	score int
}

// RecallSearch runs the recall_search tool. It reads the archive only
// through All, and only when the query has terms.
func RecallSearch(args string, a Archive) string {
	m := decodeArgs(args)
	query, _ := m["query"].(string)
	if strings.TrimSpace(query) == "" {
		return textMissingQuery
	}
	terms := recallTokens(query)
	if len(terms) == 0 {
		return textNoMatch(query)
	}
	limit := defaultLimit
	// int(f) is Go's own conversion: truncation toward zero, and on amd64
	// math.MinInt64 when f is out of int64 range.
	if f, ok := m["limit"].(float64); ok && int(f) >= 1 {
		limit = min(int(f), maxLimit)
	}

	var hits []hit
	for _, b := range a.All() {
		if s := score(b, terms); s > 0 {
			hits = append(hits, hit{b, s})
		}
	}
	if len(hits) == 0 {
		return textNoMatch(query)
	}
	// Highest score first; on equal score, the most recent (highest seq).
	slices.SortFunc(hits, func(x, y hit) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		return cmp.Compare(y.block.Seq, x.block.Seq)
	})

	shown := min(limit, len(hits))
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d of %d matching blocks for %q:", shown, len(hits), query)
	for _, h := range hits[:shown] {
		sb.WriteString("\n" + header(h.block) + fmt.Sprintf(" (score %d)", h.score))
		if e := excerpt(h.block.Content); e != "" {
			sb.WriteString("\n  " + e)
		}
	}
	return sb.String()
}

// score adds 1 for each term in the lowered content and 2 for each term in
// the lowered label.
func score(b Block, terms []string) int {
	lc, ll := strings.ToLower(b.Content), strings.ToLower(b.Label)
	s := 0
	for _, t := range terms {
		if strings.Contains(lc, t) {
			s++
		}
		if strings.Contains(ll, t) {
			s += 2
		}
	}
	return s
}

// recallTokens splits a query into its distinct search terms, in order: the
// lowered query cut on every rune that is not a-z, 0-9 or U+00E0 to U+00FF,
// keeping the fields of at least two runes, each once.
func recallTokens(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || 0xE0 <= r && r <= 0xFF)
	})
	var terms []string
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if utf8.RuneCountInString(f) < 2 || seen[f] {
			continue
		}
		seen[f] = true
		terms = append(terms, f)
	}
	return terms
}

// excerpt returns the first non-blank line of content (lines split on "\n"),
// trimmed, and cut to 160 runes followed by "…" when longer.
func excerpt(content string) string {
	for _, line := range strings.Split(content, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			n := 0
			for i := range t {
				if n == excerptRunes {
					return t[:i] + "…"
				}
				n++
			}
			return t
		}
	}
	return ""
}

// header is "[rN]", followed by " " + label when the label is not empty.
func header(b Block) string {
	h := "[" + b.ID() + "]"
	if b.Label != "" {
		h += " " + b.Label
	}
	return h
}

func textNotFound(id string) string { return fmt.Sprintf("no archived block %q", id) }

func textBlock(b Block) string { return header(b) + "\n" + b.Content }

func textNoMatch(query string) string { return fmt.Sprintf("no archived block matches %q", query) }

// Command gentables writes recall/_go/_tables.py: the Unicode tables of Go's
// standard library that the Python port needs (unicode.ToLower, unicode.IsSpace,
// strconv.IsPrint), with the Go and Unicode versions that produced them.
//
// Usage: go run ./cmd/gentables -o ../recall/_go/_tables.py
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unicode"
)

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	flag.Parse()
	src := generate()
	if *out == "" {
		if _, err := os.Stdout.Write(src); err != nil {
			fatal(err)
		}
		return
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gentables:", err)
	os.Exit(1)
}

// generate renders the whole Python module; the output depends only on the Go
// standard library that runs it.
func generate() []byte {
	var b bytes.Buffer
	b.WriteString(`"""Go's Unicode tables for recall._go.

GENERATED — do not edit. Written by goref/cmd/gentables (make tables) from the Go
standard library named in GO_VERSION.
"""

from __future__ import annotations

`)
	fmt.Fprintf(&b, "GO_VERSION: str = %q\n", runtime.Version())
	fmt.Fprintf(&b, "UNICODE_VERSION: str = %q\n", unicode.Version)

	// LOWER: every rune r with unicode.ToLower(r) != r, as code point -> code point.
	b.WriteString("\n# unicode.ToLower(r) for every rune r it changes (usable with str.translate).\n")
	b.WriteString("LOWER: dict[int, int] = {\n")
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l != r {
			fmt.Fprintf(&b, "    0x%04X: 0x%04X,\n", r, l)
		}
	}
	b.WriteString("}\n")

	// SPACE: every rune with unicode.IsSpace.
	b.WriteString("\n# Every rune r with unicode.IsSpace(r).\n")
	b.WriteString("SPACE: frozenset[int] = frozenset(\n    {\n")
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) {
			fmt.Fprintf(&b, "        0x%04X,\n", r)
		}
	}
	b.WriteString("    }\n)\n")

	// PRINT: strconv.IsPrint as inclusive ranges. strconv.Quote follows
	// strconv.IsPrint; record every rune where unicode.IsPrint disagrees.
	var disagree []rune
	type span struct{ lo, hi rune }
	var spans []span
	for r := rune(0); r <= unicode.MaxRune; r++ {
		p := strconv.IsPrint(r)
		if p != unicode.IsPrint(r) {
			disagree = append(disagree, r)
		}
		if !p {
			continue
		}
		if k := len(spans); k > 0 && spans[k-1].hi == r-1 {
			spans[k-1].hi = r
		} else {
			spans = append(spans, span{r, r})
		}
	}
	b.WriteString("\n# The table PRINT follows (strconv.Quote uses strconv.IsPrint).\n")
	b.WriteString("PRINT_FOLLOWS: str = \"strconv.IsPrint\"\n")
	b.WriteString("\n# Runes where unicode.IsPrint differs from strconv.IsPrint (expected empty).\n")
	b.WriteString("PRINT_DISAGREES: tuple[int, ...] = (")
	if len(disagree) == 0 {
		b.WriteString(")\n")
	} else {
		b.WriteString("\n")
		for _, r := range disagree {
			fmt.Fprintf(&b, "    0x%04X,\n", r)
		}
		b.WriteString(")\n")
	}
	b.WriteString("\n# Runes r with strconv.IsPrint(r), as sorted inclusive ranges (lo, hi).\n")
	b.WriteString("PRINT: tuple[tuple[int, int], ...] = (\n")
	for _, s := range spans {
		fmt.Fprintf(&b, "    (0x%04X, 0x%04X),\n", s.lo, s.hi)
	}
	b.WriteString(")\n")
	return b.Bytes()
}

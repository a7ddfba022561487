// Command gentables writes the tables of Go's standard library that the
// Python port needs (unicode.ToLower, unicode.IsSpace, strconv.IsPrint) as
// recall/_go/_unicode_<major>_<minor>_<patch>.py for the Go that runs it:
// each in the form recall/_go uses it, as a few string literals, so that
// the module compiles fast and nothing is derived from it at import.
//
// Usage: go run ./cmd/gentables [-dir ../recall/_go] (without -dir: standard output)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

func main() {
	dir := flag.String("dir", "", "directory of the module (default: standard output)")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gentables:", err)
		os.Exit(1)
	}
}

// write writes the module in dir and prints its path, or writes it on
// standard output when dir is empty.
func write(dir string) error {
	src, err := generate()
	switch {
	case err != nil:
		return err
	case dir == "":
		_, err = os.Stdout.Write(src)
		return err
	}
	path := filepath.Join(dir, "_unicode_"+strings.ReplaceAll(unicode.Version, ".", "_")+".py")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return err
	}
	_, err = fmt.Println(path)
	return err
}

// perLine is how many runes or bytes a line of a string literal holds.
const perLine = 16

// pyRune is r as a Python string escape.
func pyRune(r rune) string {
	if r <= 0xFFFF {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// pyStr writes runes as a Python string literal, perLine runes a line (implicit
// concatenation), each line indented by indent, and end after the last.
func pyStr(b *bytes.Buffer, indent string, runes []rune, end string) {
	if len(runes) == 0 {
		b.WriteString(indent + `""` + end + "\n")
		return
	}
	for i := 0; i < len(runes); i += perLine {
		b.WriteString(indent + `"`)
		for _, r := range runes[i:min(i+perLine, len(runes))] {
			b.WriteString(pyRune(r))
		}
		b.WriteString(`"`)
		if i+perLine >= len(runes) {
			b.WriteString(end)
		}
		b.WriteString("\n")
	}
}

// generate renders the whole Python module; the output depends only on the Go
// standard library that runs it.
func generate() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `"""Go's tables of Unicode %[1]s for recall._go, in the form recall._go uses them.

GENERATED — do not edit. Written by goref/cmd/gentables (make tables) from the Go
standard library named in GO_VERSION.
"""

from __future__ import annotations

GO_VERSION: str = %[2]q
UNICODE_VERSION: str = %[1]q
`, unicode.Version, runtime.Version())

	// from, to: every rune r with unicode.ToLower(r) != r, and its lower;
	// space: unicode.IsSpace; lo, hi: strconv.IsPrint as inclusive ranges
	// (strconv.Quote follows it); disagree: where unicode.IsPrint differs.
	var from, to, space, lo, hi []rune
	var disagree []string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l != r {
			from, to = append(from, r), append(to, l)
		}
		if unicode.IsSpace(r) {
			space = append(space, r)
		}
		p := strconv.IsPrint(r)
		if p != unicode.IsPrint(r) {
			disagree = append(disagree, fmt.Sprintf("0x%04X,", r))
		}
		if k := len(hi); p && k > 0 && hi[k-1] == r-1 {
			hi[k-1] = r // extends the last range
		} else if p {
			lo, hi = append(lo, r), append(hi, r)
		}
	}
	for _, r := range append(lo, hi...) {
		if 0xD800 <= r && r <= 0xDFFF {
			return nil, fmt.Errorf("printable range bound U+%04X is a surrogate", r)
		}
	}
	b.WriteString("\n# strings.ToLower: unicode.ToLower(r) for every rune r it changes, as\n")
	b.WriteString("# str.translate takes it (code point -> code point).\n")
	b.WriteString("LOWER: dict[int, int] = str.maketrans(\n")
	pyStr(&b, "    ", from, ",")
	pyStr(&b, "    ", to, ",")
	b.WriteString(")\n")

	// LATIN1_LOWER and WIDE_TO_LATIN1: strings.ToLower as one Latin-1 byte a rune.
	b.WriteString("\n# For bytes.translate: byte c -> unicode.ToLower(c) for c in U+0000..U+00FF\n")
	b.WriteString("# (\"?\" where that lower would be wider than U+00FF).\n")
	b.WriteString("LATIN1_LOWER: bytes = (\n")
	for r := rune(0); r <= 0xFF; r++ {
		if r%perLine == 0 {
			b.WriteString(`    b"`)
		}
		if l := unicode.ToLower(r); l <= 0xFF {
			fmt.Fprintf(&b, `\x%02x`, l)
		} else {
			b.WriteString(`\x3f`) // "?"
		}
		if r%perLine == perLine-1 {
			b.WriteString("\"\n")
		}
	}
	b.WriteString(")\n")
	b.WriteString("\n# (rune, unicode.ToLower(rune)) for every rune above U+00FF whose lower is\n")
	b.WriteString("# in U+0000..U+00FF.\n")
	b.WriteString("WIDE_TO_LATIN1: tuple[tuple[str, str], ...] = (\n")
	for i, r := range from {
		if r > 0xFF && to[i] <= 0xFF {
			fmt.Fprintf(&b, "    (\"%s\", \"%s\"),\n", pyRune(r), pyRune(to[i]))
		}
	}
	b.WriteString(")\n")

	b.WriteString("\n# Every rune r with unicode.IsSpace(r), in order (for str.strip).\n")
	b.WriteString("SPACE: str = (\n")
	pyStr(&b, "    ", space, "")
	b.WriteString(")\n")

	b.WriteString("\n# The table PRINT_LO, PRINT_HI follows (strconv.Quote uses strconv.IsPrint).\n")
	b.WriteString("PRINT_FOLLOWS: str = \"strconv.IsPrint\"\n")
	b.WriteString("\n# Runes where unicode.IsPrint differs from strconv.IsPrint (expected empty).\n")
	b.WriteString("PRINT_DISAGREES: tuple[int, ...] = (" + strings.Join(disagree, " ") + ")\n")
	b.WriteString("\n# The runes r with strconv.IsPrint(r) are the ranges PRINT_LO[i]..PRINT_HI[i]\n")
	b.WriteString("# (inclusive, ascending, disjoint, not adjacent), code points for bisect.\n")
	for _, table := range []struct {
		name  string
		runes []rune
	}{{"PRINT_LO", lo}, {"PRINT_HI", hi}} {
		b.WriteString(table.name + ": tuple[int, ...] = tuple(\n    map(\n        ord,\n")
		pyStr(&b, "        ", table.runes, ",")
		b.WriteString("    )\n)\n")
	}
	return b.Bytes(), nil
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestPyStr(t *testing.T) {
	for _, tt := range []struct {
		runes []rune
		want  string
	}{
		{nil, "  \"\",\n"},
		{[]rune{'a', 0xFFFF, 0x1F600}, "  \"\\u0061\\uffff\\U0001f600\",\n"},
		{[]rune(strings.Repeat("a", perLine+1)), "  \"" + strings.Repeat(`\u0061`, perLine) + "\"\n  \"\\u0061\",\n"},
		{[]rune(strings.Repeat("a", perLine)), "  \"" + strings.Repeat(`\u0061`, perLine) + "\",\n"},
	} {
		var b bytes.Buffer
		pyStr(&b, "  ", tt.runes, ",")
		if b.String() != tt.want {
			t.Errorf("pyStr(%q) = %q; want %q", tt.runes, b.String(), tt.want)
		}
	}
}

func TestGenerate(t *testing.T) {
	src, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"GO_VERSION: str = " + strconv.Quote(runtime.Version()) + "\n",
		"UNICODE_VERSION: str = " + strconv.Quote(unicode.Version) + "\n",
		"LOWER: dict[int, int] = str.maketrans(\n",
		"LATIN1_LOWER: bytes = (\n    b\"\\x00\\x01",
		"WIDE_TO_LATIN1: tuple[tuple[str, str], ...] = (\n    (\"\\u0130\", \"\\u0069\"),\n",
		"SPACE: str = (\n    \"\\u0009\\u000a\\u000b\\u000c\\u000d\\u0020\\u0085\\u00a0",
		"PRINT_FOLLOWS: str = \"strconv.IsPrint\"\n",
		"PRINT_LO: tuple[int, ...] = tuple(\n    map(\n        ord,\n        \"\\u0020",
		"PRINT_HI: tuple[int, ...] = tuple(\n    map(\n        ord,\n        \"\\u007e",
	} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the module lacks %q", want)
		}
	}
	if again, _ := generate(); !bytes.Equal(again, src) {
		t.Error("two runs wrote different modules")
	}

	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	name := "_unicode_" + strings.ReplaceAll(unicode.Version, ".", "_") + ".py"
	if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, src) {
		t.Errorf("write: %s holds %d bytes (%v); want the %d of generate", name, len(got), err, len(src))
	}
	if err := write(filepath.Join(dir, "missing")); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

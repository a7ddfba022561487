package archive

import (
	"slices"
	"testing"

	"recallref/recall"
)

// seqs returns the seqs of blocks.
func seqs(blocks []recall.Block) []int64 {
	out := []int64{}
	for _, b := range blocks {
		out = append(out, b.Seq)
	}
	return out
}

func TestDelta(t *testing.T) {
	a := New(10)
	check := func(since uint64, wantBlocks, wantGone []int64, wantOK bool) {
		t.Helper()
		blocks, gone, gen, ok := a.Delta(since)
		if ok != wantOK || gen != a.Generation() {
			t.Fatalf("Delta(%d): ok %v, gen %d; want %v, %d", since, ok, gen, wantOK, a.Generation())
		}
		if ok && (!slices.Equal(seqs(blocks), wantBlocks) || !slices.Equal(gone, wantGone)) {
			t.Errorf("Delta(%d) = %v, %v; want %v, %v", since, seqs(blocks), gone, wantBlocks, wantGone)
		}
	}
	check(0, []int64{}, []int64{}, true)
	check(1, nil, nil, false) // a generation never reached
	a.Add("a", "one", false)  // gen 1: 10
	a.Add("b", "two", true)   // gen 2: 11 locked
	a.Add("c", "three", false)
	a.SetLocked(10, true)  // gen 4
	a.SetLocked(11, false) // gen 5
	check(0, []int64{11, 12}, []int64{}, true)
	check(1, []int64{11, 12}, []int64{10}, true)
	check(3, []int64{11}, []int64{10}, true)
	a.SetLocked(10, false) // gen 6: 10 is back
	a.SetLocked(12, true)  // gen 7
	check(3, []int64{11}, []int64{12}, true)
	check(5, []int64{10}, []int64{12}, true)
	check(7, []int64{}, []int64{}, true)
	if b, _, _, _ := a.Delta(6); b == nil {
		t.Error("Delta gave nil blocks")
	}

	a.Reset(10) // gen 8: the history is forgotten
	check(7, nil, nil, false)
	check(8, []int64{}, []int64{}, true)
	a.Add("d", "four", false)
	check(8, []int64{10}, []int64{}, true)
	if blocks, _, _, _ := a.Delta(8); blocks[0].Content != "four" {
		t.Errorf("Delta after Reset holds %v", blocks)
	}
}

func TestHistoryBound(t *testing.T) {
	a := New(1)
	a.SetHistory(3)
	for i := 0; i < 5; i++ {
		a.Add("l", "c", false) // gens 1..5
	}
	a.Add("l", "locked", true) // gen 6, no change of the readable set
	for since, ok := range map[uint64]bool{0: false, 1: false, 2: true, 3: true, 6: true} {
		if _, _, _, got := a.Delta(since); got != ok {
			t.Errorf("history of 3: Delta(%d) ok %v; want %v", since, got, ok)
		}
	}
	if blocks, _, _, _ := a.Delta(2); !slices.Equal(seqs(blocks), []int64{3, 4, 5}) {
		t.Errorf("Delta(2) = %v", seqs(blocks))
	}
	a.SetHistory(0)
	a.Add("l", "c", false) // gen 7
	for _, since := range []uint64{5, 6} {
		if _, _, _, ok := a.Delta(since); ok {
			t.Errorf("no history: Delta(%d) ok", since)
		}
	}
	if _, _, _, ok := a.Delta(7); !ok {
		t.Error("no history: Delta of the current generation not ok")
	}
	// A long run keeps the bound (the array is reused, not grown).
	a.SetHistory(100)
	for i := 0; i < 10_000; i++ {
		a.Add("l", "c", false)
	}
	if n, c := len(a.hist.changes), cap(a.hist.changes); n != 100 || c > 400 {
		t.Errorf("after 10,000 changes: %d kept, capacity %d; want 100 and a small capacity", n, c)
	}
}

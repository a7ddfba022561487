package archive

import (
	"math"
	"slices"
	"sync"
	"testing"

	"recallref/recall"
)

func TestArchive(t *testing.T) {
	a := New(1000)
	if got := a.All(); got == nil || len(got) != 0 {
		t.Fatalf("All() of an empty archive = %#v; want an empty, non-nil slice", got)
	}
	for i, in := range []struct {
		label, content string
		locked         bool
	}{{"a", "one", false}, {"", "", true}, {"c", "three", false}} {
		seq, err := a.Add(in.label, in.content, in.locked)
		if err != nil || seq != int64(1000+i) {
			t.Fatalf("Add #%d = %d, %v; want %d", i, seq, err, 1000+i)
		}
	}
	want := []recall.Block{{Seq: 1000, Label: "a", Content: "one"}, {Seq: 1002, Label: "c", Content: "three"}}
	if got := a.All(); !slices.Equal(got, want) {
		t.Errorf("All() = %v; want %v", got, want)
	}
	for _, tt := range []struct {
		seq int64
		ok  bool
	}{{1000, true}, {1001, false}, {1002, true}, {1003, false}, {999, false}, {0, false}, {-1, false}, {math.MinInt64, false}, {math.MaxInt64, false}} {
		b, ok := a.Get(tt.seq)
		if ok != tt.ok || ok && b.Seq != tt.seq {
			t.Errorf("Get(%d) = %v, %v; want found: %v", tt.seq, b, ok, tt.ok)
		}
	}
}

func TestArchiveExhausted(t *testing.T) {
	a := New(math.MaxInt64 - 1)
	for _, want := range []int64{math.MaxInt64 - 1, math.MaxInt64} {
		if seq, err := a.Add("", "x", false); seq != want || err != nil {
			t.Fatalf("Add = %d, %v; want %d", seq, err, want)
		}
	}
	if _, err := a.Add("", "x", false); err != ErrExhausted {
		t.Fatalf("Add past MaxInt64: err = %v; want ErrExhausted", err)
	}
	if b, ok := a.Get(math.MaxInt64); !ok || b.Seq != math.MaxInt64 {
		t.Errorf("Get(MaxInt64) = %v, %v", b, ok)
	}
}

func TestNewRejectsFirstSeqBelowOne(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(0) did not panic")
		}
	}()
	New(0)
}

func TestArchiveConcurrent(t *testing.T) {
	a := New(1)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := a.Add("l", "c", g%2 == 0); err != nil {
					t.Error(err)
				}
				a.All()
				a.Get(5)
			}
		}(g)
	}
	wg.Wait()
	seen := 0
	for seq := int64(1); seq <= 800; seq++ {
		if _, ok := a.Get(seq); ok {
			seen++
		}
	}
	if n := len(a.All()); n != 400 || seen != 400 {
		t.Errorf("readable blocks: All %d, Get %d; want 400", n, seen)
	}
	if seq, _ := a.Add("", "", false); seq != 801 {
		t.Errorf("next seq = %d; want 801", seq)
	}
}

func TestGeneration(t *testing.T) {
	a := New(5)
	if g := a.Generation(); g != 0 {
		t.Fatalf("Generation() of a new archive = %d; want 0", g)
	}
	a.Add("a", "one", false)
	a.Add("b", "two", true) // a locked block changes the archive too
	blocks, gen := a.Snapshot()
	if gen != 2 || a.Generation() != 2 {
		t.Errorf("generation after two adds: Snapshot %d, Generation %d; want 2", gen, a.Generation())
	}
	if want := []recall.Block{{Seq: 5, Label: "a", Content: "one"}}; !slices.Equal(blocks, want) {
		t.Errorf("Snapshot() blocks = %v; want %v", blocks, want)
	}
	a.Get(5)
	a.All()
	if g := a.Generation(); g != 2 {
		t.Errorf("reads changed the generation to %d", g)
	}
}

// TestSnapshotConsistent checks that a snapshot's blocks and generation are
// read together: with only readable adds, the generation is the block count.
func TestSnapshotConsistent(t *testing.T) {
	a := New(1)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				a.Add("l", "c", false)
			}
		}()
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if blocks, gen := a.Snapshot(); uint64(len(blocks)) != gen {
					t.Errorf("Snapshot: %d blocks at generation %d", len(blocks), gen)
					return
				}
			}
		}()

	}
	wg.Wait()
}

func TestSetLocked(t *testing.T) {
	a := New(10)
	a.Add("a", "one", false)
	a.Add("b", "two", true)
	gen := a.Generation()
	for _, seq := range []int64{9, 12, 0, -1, math.MinInt64, math.MaxInt64} {
		if a.SetLocked(seq, true) {
			t.Errorf("SetLocked(%d) found a block never archived", seq)
		}
	}
	if !a.SetLocked(10, true) || !a.SetLocked(11, false) {
		t.Fatal("SetLocked missed an archived block")
	}
	if _, ok := a.Get(10); ok {
		t.Error("a locked block is readable")
	}
	want := []recall.Block{{Seq: 11, Label: "b", Content: "two"}}
	if got := a.All(); !slices.Equal(got, want) {
		t.Errorf("All() after lock and unlock = %v; want %v", got, want)
	}
	if g := a.Generation(); g != gen+2 {
		t.Errorf("generation %d after two changes from %d", g, gen)
	}
	// Locking a locked block, or a failed lock, changes nothing.
	a.SetLocked(10, true)
	a.SetLocked(11, false)
	a.SetLocked(99, false)
	if g := a.Generation(); g != gen+2 {
		t.Errorf("generation %d after no change; want %d", g, gen+2)
	}
}

func TestReset(t *testing.T) {
	a := New(10)
	a.Add("a", "one", false)
	a.Add("b", "two", true)
	gen := a.Generation()
	a.Reset(500)
	if got := a.All(); len(got) != 0 {
		t.Errorf("All() after Reset = %v", got)
	}
	if _, ok := a.Get(10); ok || a.SetLocked(10, false) {
		t.Error("a block archived before Reset is still there")
	}
	if g := a.Generation(); g <= gen {
		t.Errorf("generation %d after Reset from %d; want it to increase", g, gen)
	}
	if seq, _ := a.Add("c", "three", false); seq != 500 {
		t.Errorf("first seq after Reset(500) = %d", seq)
	}
	if a.InitialSeq() != 10 {
		t.Errorf("InitialSeq() = %d; want 10", a.InitialSeq())
	}
	defer func() {
		if recover() == nil {
			t.Error("Reset(0) did not panic")
		}
	}()
	a.Reset(0)
}

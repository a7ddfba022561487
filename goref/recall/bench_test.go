package recall

import (
	"encoding/json"
	"os"
	"testing"
)

// benchBlocks caches the blocks file that BenchmarkSearch read last, so that
// -count runs do not parse it again.
var benchBlocks struct {
	path   string
	blocks []Block
}

// BenchmarkSearch runs RecallSearch over the blocks of the JSON file named by
// RECALL_BENCH_BLOCKS (the {"blocks": [...]} that /internal/v1/recall/blocks
// serves). The arguments are RECALL_BENCH_ARGS verbatim when set, otherwise
// {"query": RECALL_BENCH_QUERY}. When RECALL_BENCH_OUTPUT names a file, the
// search's output is written to it first (for a parity check against the
// port). It skips without the blocks file.
//
//	RECALL_BENCH_BLOCKS=blocks.json RECALL_BENCH_QUERY='hello world' \
//	    go test -run '^$' -bench BenchmarkSearch ./recall
func BenchmarkSearch(b *testing.B) {
	path := os.Getenv("RECALL_BENCH_BLOCKS")
	if path == "" {
		b.Skip("RECALL_BENCH_BLOCKS is not set")
	}
	if benchBlocks.path != path {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var file struct {
			Blocks []Block `json:"blocks"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		benchBlocks.path, benchBlocks.blocks = path, file.Blocks
	}
	args, ok := os.LookupEnv("RECALL_BENCH_ARGS")
	if !ok {
		raw, err := json.Marshal(map[string]string{"query": os.Getenv("RECALL_BENCH_QUERY")})
		if err != nil {
			b.Fatal(err)
		}
		args = string(raw)
	}
	a := &testArchive{blocks: benchBlocks.blocks}
	if out := os.Getenv("RECALL_BENCH_OUTPUT"); out != "" {
		if err := os.WriteFile(out, []byte(RecallSearch(args, a)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		RecallSearch(args, a)
	}
	b.ReportMetric(float64(len(a.blocks)), "blocks")
}

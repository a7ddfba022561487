package recall

import (
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkSearch runs RecallSearch over the blocks of the JSON file named by
// RECALL_BENCH_BLOCKS (the {"blocks": [...]} that /internal/v1/recall/blocks
// serves) with the query RECALL_BENCH_QUERY. It skips without the file.
//
//	RECALL_BENCH_BLOCKS=blocks.json RECALL_BENCH_QUERY='hello world' \
//	    go test -run '^$' -bench BenchmarkSearch ./recall
func BenchmarkSearch(b *testing.B) {
	path := os.Getenv("RECALL_BENCH_BLOCKS")
	if path == "" {
		b.Skip("RECALL_BENCH_BLOCKS is not set")
	}
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
	args, err := json.Marshal(map[string]string{"query": os.Getenv("RECALL_BENCH_QUERY")})
	if err != nil {
		b.Fatal(err)
	}
	a := &testArchive{blocks: file.Blocks}
	for b.Loop() {
		RecallSearch(string(args), a)
	}
	b.ReportMetric(float64(len(file.Blocks)), "blocks")
}

package lineage_test

import (
	"context"
	"fmt"
	"testing"

	"tuttid/lineage"
)

// BenchmarkTree reads a whole fork tree from a leaf. The 10-node tree is
// the baseline: ns/node of the 1000-node tree over it says whether the cost
// grows with the rows returned (a ratio near 1 or below) or worse.
func BenchmarkTree(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			e := newEnv(b)
			e.workspace(b, "w")
			_, leaf := bigTree(b, e, "n", n)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				nodes, err := lineage.Tree(ctx, e.st.Client, "w", leaf)
				if err != nil || len(nodes) != n {
					b.Fatalf("tree: %d nodes, %v", len(nodes), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/node")
		})
	}
}

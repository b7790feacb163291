package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// heapProfEnv, set to a directory in a tuttid child, makes it write a heap
// profile there each time its live heap reaches a new peak (by 16 MiB
// steps), as heap-<n>.pb.gz, n counting up: where the memory of
// TestLargeSessionBoundedMemory goes (the files' times place them in its
// phases).
//
//	TUTTID_TEST_HEAPPROF=/tmp/hp go test -run TestLargeSession .
//	go tool pprof -sample_index=inuse_space -top /tmp/hp/heap-3.pb.gz
const heapProfEnv = "TUTTID_TEST_HEAPPROF"

func init() {
	dir := os.Getenv(heapProfEnv)
	if dir == "" || os.Getenv(asServerEnv) != "1" {
		return
	}
	go profilePeaks(dir)
}

func profilePeaks(dir string) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var written uint64
	n := 0
	for range time.Tick(20 * time.Millisecond) {
		metrics.Read(sample)
		live := sample[0].Value.Uint64()
		if live < written+16<<20 {
			continue
		}
		written = live
		n++
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pb.gz", n)))
		if err != nil {
			continue
		}
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}

package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeBigLine writes `prefix + size bytes of x + suffix + "\n"` in 1 MiB
// writes, so that the test itself holds no copy of the line.
func writeBigLine(t *testing.T, w io.Writer, prefix string, size int, suffix string) {
	t.Helper()
	chunk := []byte(strings.Repeat("x", 1<<20))
	if _, err := io.WriteString(w, prefix); err != nil {
		t.Fatal(err)
	}
	for size > 0 {
		n := min(size, len(chunk))
		if _, err := w.Write(chunk[:n]); err != nil {
			t.Fatal(err)
		}
		size -= n
	}
	if _, err := io.WriteString(w, suffix+"\n"); err != nil {
		t.Fatal(err)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Once a line of tens of megabytes is dispatched nothing of it stays alive:
// the reader keeps no buffer sized to the largest line, for a notification
// or for a reply.
func TestBigLinesLeaveNothingBehind(t *testing.T) {
	const size = 32 << 20
	p := newPipePeer(t, 0, nil)
	before := liveHeap()

	writeBigLine(t, p.out, `{"method":"some/notification","params":{"item":{"type":"message","text":"`, size, `"}}}`)
	select {
	case m := <-p.note:
		if m != "some/notification" {
			t.Fatalf("notified %q", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notification")
	}
	if grown := int64(liveHeap()) - int64(before); grown > 8<<20 {
		t.Errorf("after a %d MiB notification the live heap grew by %d MiB", size>>20, grown>>20)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := p.callAsync(ctx, "big")
	id := string(p.next(t)["id"])
	writeBigLine(t, p.out, `{"id":`+id+`,"result":{"text":"`, size, `"}}`)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := len(r.out["text"].(string)); got != size {
		t.Fatalf("reply text of %d bytes, want %d", got, size)
	}
	r.out = nil
	if grown := int64(liveHeap()) - int64(before); grown > 8<<20 {
		t.Errorf("after a %d MiB reply the live heap grew by %d MiB", size>>20, grown>>20)
	}
}

// Params handed to a handler are pieces of their own line (LineRaw, no
// copy): the next lines must not overwrite them.
func TestParamsSurviveLaterLines(t *testing.T) {
	kept := make(chan json.RawMessage, 3)
	cr, sw := io.Pipe()
	_, cw := io.Pipe()
	c := New(cr, cw, 0, testLogger(t), Handlers{Notify: func(_ string, params json.RawMessage) { kept <- params }})
	t.Cleanup(func() { sw.Close(); <-c.Done() })
	want := []string{`{"n":"` + strings.Repeat("a", 100<<10) + `"}`, `{"n":"` + strings.Repeat("b", 100<<10) + `"}`, `{"n":"c"}`}
	for _, params := range want {
		if _, err := io.WriteString(sw, `{"method":"m","params":`+params+"}\n"); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range want {
		select {
		case got := <-kept:
			if string(got) != w {
				t.Fatalf("params %d changed: %.40s…", i, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
	}
}

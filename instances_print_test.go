package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"tuttid/instance"
)

func TestPrintInstances(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	list := []instance.Info{
		{ID: "a", AdvertiseURL: "http://10.0.0.1:8080", HeartbeatAt: at, Alive: true, Sessions: 3},
		{ID: "b", AdvertiseURL: "http://10.0.0.2:8080", HeartbeatAt: at.Add(-time.Minute), Sessions: 0},
	}
	var b bytes.Buffer
	if err := printInstances(&b, list, false); err != nil {
		t.Fatal(err)
	}
	if want := "a http://10.0.0.1:8080 2026-12-04T21:00:00Z up 3\nb http://10.0.0.2:8080 2026-12-04T20:59:00Z down 0\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := printInstances(&b, nil, true); err != nil || b.String() != "[]\n" {
		t.Errorf("--json with none: %q %v, want []", b.String(), err)
	}
	b.Reset()
	if err := printInstances(&b, list, true); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got) != 2 || got[0]["id"] != "a" ||
		got[0]["advertiseUrl"] != "http://10.0.0.1:8080" || got[0]["lastHeartbeat"] != "2026-12-04T21:00:00Z" || got[0]["sessionsOwned"] != 3.0 {
		t.Errorf("--json: %s", b.String())
	}
}

package pgfeed

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
)

// fill sets every exported field of the struct v points to (not Edges) to
// a value that is not its zero.
func fill(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f, sf := rv.Field(i), rv.Type().Field(i)
		if !sf.IsExported() || sf.Name == "Edges" {
			continue
		}
		if !set(f) {
			t.Fatalf("%s.%s: no test value for %s", rv.Type().Name(), sf.Name, f.Type())
		}
	}
}

func set(f reflect.Value) bool {
	switch {
	case f.Type() == reflect.TypeOf(time.Time{}):
		f.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)))
	case f.Type() == reflect.TypeOf(json.RawMessage(nil)):
		f.Set(reflect.ValueOf(json.RawMessage(`{"k":[1,"two"]}`)))
	case f.Kind() == reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if !set(p.Elem()) {
			return false
		}
		f.Set(p)
	case f.Kind() == reflect.Struct:
		for i := range f.NumField() {
			if f.Type().Field(i).IsExported() && !set(f.Field(i)) {
				return false
			}
		}
	case f.Kind() == reflect.Interface:
		f.Set(reflect.ValueOf("v"))
	case f.Kind() == reflect.String:
		f.SetString("x\u0000\"é")
	case f.Kind() == reflect.Bool:
		f.SetBool(true)
	case f.CanInt():
		f.SetInt(42)
	case f.CanFloat():
		f.SetFloat(1.5)
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		f.Set(reflect.ValueOf([]string{"a", "b"}).Convert(f.Type()))
	case f.Kind() == reflect.Map && f.Type().Key().Kind() == reflect.String:
		m := reflect.MakeMap(f.Type())
		v := reflect.New(f.Type().Elem()).Elem()
		if !set(v) {
			return false
		}
		m.SetMapIndex(reflect.ValueOf("k"), v)
		f.Set(m)
	default:
		return false
	}
	return true
}

// An event read back from the table is the event published: every field
// of every payload survives (a field the encoding leaves out would reach
// the other instances' subscribers empty).
func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	e := activity.Event{Kind: activity.MessageUpdated, WorkspaceID: "w", AgentSessionID: "s",
		Session: &ent.AgentSession{}, Turn: &ent.Turn{}, Message: &ent.Message{}, Fork: &ent.SessionFork{},
		Approval: &ent.ApprovalRequest{}, Account: &agent.Account{}, Error: "e", Delta: "d\u0000", ItemID: "i", DeltaKind: "k",
		Notice: "n", NoticeKind: "nk"}
	for _, v := range []any{e.Session, e.Turn, e.Message, e.Fork, e.Approval, e.Account} {
		fill(t, v)
	}
	payload, err := encode(e)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	got, err := decode(7, at, payload)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 7 || !got.At.Equal(at) {
		t.Errorf("seq %d at %v, want 7 at %v", got.Seq, got.At, at)
	}
	again, err := encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(payload, again) {
		t.Errorf("payload changed through a round trip:\n%s\n%s", payload, again)
	}
	// No field is left out of the payload (json:"-"): each filled one is there.
	for _, v := range []any{e.Session, e.Turn, e.Message, e.Fork, e.Approval} {
		rt := reflect.TypeOf(v).Elem()
		for i := range rt.NumField() {
			sf := rt.Field(i)
			if !sf.IsExported() || sf.Name == "Edges" {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" || !bytes.Contains(payload, []byte(`"`+name+`":`)) {
				t.Errorf("%s.%s is not in the payload", rt.Name(), sf.Name)
			}
		}
	}
	// Every field of the event itself comes back (Seq and At are columns).
	want := e
	want.Seq, want.At = got.Seq, got.At
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event fields changed:\n got %+v\nwant %+v", got, want)
	}
}

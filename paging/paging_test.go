package paging

import (
	"testing"

	"tuttid/apperr"
)

func ptr[T any](v T) *T { return &v }

func TestCheck(t *testing.T) {
	c5 := Cursor("m", 5)
	tests := []struct {
		name    string
		args    Args
		want    Window
		wantErr bool
	}{
		{"default", Args{}, Window{Limit: DefaultPage}, false},
		{"first", Args{First: ptr(3)}, Window{Limit: 3}, false},
		{"last", Args{Last: ptr(2)}, Window{Limit: 2, Backward: true}, false},
		{"after", Args{First: ptr(1), After: &c5}, Window{Limit: 1, After: ptr(int64(5))}, false},
		{"before", Args{Last: ptr(1), Before: &c5}, Window{Limit: 1, Backward: true, Before: ptr(int64(5))}, false},
		{"both", Args{First: ptr(1), Last: ptr(1)}, Window{}, true},
		{"negative", Args{First: ptr(-1)}, Window{}, true},
		{"too large", Args{Last: ptr(MaxPage + 1)}, Window{}, true},
		{"garbage cursor", Args{After: ptr("!!")}, Window{}, true},
		{"other kind", Args{After: ptr(Cursor("s", 5))}, Window{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.args.Check("m")
			if tt.wantErr {
				if apperr.CodeOf(err) != apperr.InvalidInput {
					t.Fatalf("err = %v, want invalid_input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Limit != tt.want.Limit || got.Backward != tt.want.Backward ||
				!eq(got.After, tt.want.After) || !eq(got.Before, tt.want.Before) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func eq(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

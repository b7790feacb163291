package fork

import "testing"

func TestForkNumber(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rest string
		n    int
		ok   bool
	}{
		{"1)", 1, true},
		{"12)", 12, true},
		{"007)", 7, true},
		{")", 0, false},
		{"1", 0, false},
		{"1)(fork2)", 0, false},
		{"x)", 0, false},
		{"-1)", 0, false},
		{"1 )", 0, false},
		{"99999999999999999999)", 0, false},
		{"2147483648)", 0, false},
		{"2147483647)", 2147483647, true},
	}
	for _, c := range cases {
		n, ok := forkNumber(c.rest)
		if n != c.n || ok != c.ok {
			t.Errorf("forkNumber(%q) = %d, %t; want %d, %t", c.rest, n, ok, c.n, c.ok)
		}
	}
}

package server

import (
	"errors"
	"slices"
	"testing"
)

func TestCleanupsRunLastFirstAndJoinErrors(t *testing.T) {
	var order []string
	var c cleanups
	boom := errors.New("feed close failed")
	c.push(func() error { order = append(order, "store"); return nil })
	c.push(func() error { order = append(order, "codex"); return nil })
	c.push(func() error { order = append(order, "feed"); return boom })
	if err := c.run(); !errors.Is(err, boom) {
		t.Errorf("run = %v, want the feed's error", err)
	}
	if want := []string{"feed", "codex", "store"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if err := c.run(); err != nil || len(order) != 3 {
		t.Errorf("a second run did something: %v, %v", err, order)
	}
}

package sample

import (
	"os"
	"testing"
)

func TestPasses(t *testing.T) {}

func TestSkips(t *testing.T) { t.Skip("not here") }

func TestFails(t *testing.T) {
	if os.Getenv("SAMPLE_FAIL") == "1" {
		t.Log("the reason it failed")
		t.Fail()
	}
}

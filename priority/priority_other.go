//go:build !unix

package priority

func lowerGroup(int, int) error { return ErrUnsupported }

// Own is 0 where nice values are not known.
func Own() (int, error) { return 0, nil }

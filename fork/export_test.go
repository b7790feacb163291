package fork

// Fingerprint is the fingerprint a request is journaled with.
func Fingerprint(in Input) string {
	n, _ := normalize(in)
	return n.fingerprint()
}

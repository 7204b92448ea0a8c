package upstream

import "testing"

// TestHeaderSafe: a value Mcp-Name cannot carry as it is goes in the
// base64 form 2026-07-28 defines; the rest go as they are.
func TestHeaderSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"echo", "echo"},
		{"file:///tmp/a b.txt", "file:///tmp/a b.txt"},
		{" padded", "=?base64?IHBhZGRlZA==?="},
		{"naïve", "=?base64?bmHDr3Zl?="},
		{"line\nbreak", "=?base64?bGluZQpicmVhaw==?="},
		{"=?base64?looks-encoded?=", "=?base64?PT9iYXNlNjQ/bG9va3MtZW5jb2RlZD89?="},
	} {
		if got := headerSafe(c.in); got != c.want {
			t.Errorf("headerSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

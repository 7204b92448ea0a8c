package gateway

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

func h8(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:8] }

func TestExposedName(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		about, prefix, name, want string
	}{
		{"a valid prefixed name is kept", "github__", "create_issue", "github__create_issue"},
		{"no prefix keeps the name", "", "search", "search"},
		{"dashes and digits are valid", "gh-2__", "list-9", "gh-2__list-9"},
		{"a dot is replaced and the full name hashed", "github__", "create.issue", "github__create_issue_" + h8("github__create.issue")},
		{"a slash and a space likewise", "fs__", "read file/x", "fs__read_file_x_" + h8("fs__read file/x")},
		{"a non-ASCII letter is one underscore", "w__", "café", "w__caf__" + h8("w__café")},
		{"exactly 64 characters is kept", "", strings.Repeat("b", 64), strings.Repeat("b", 64)},
		{"a name over 64 keeps a 55-character head", "p__", long, "p__" + long[:52] + "_" + h8("p__"+long)},
		{"an empty name under no prefix is a hash alone", "", "", "_" + h8("")},
	} {
		t.Run(tc.about, func(t *testing.T) {
			got := ExposedName(tc.prefix, tc.name)
			if got != tc.want {
				t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
			}
			if !ValidName(got) {
				t.Errorf("%q is not a valid name", got)
			}
			if again := ExposedName(tc.prefix, tc.name); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
}

func TestSplitURI(t *testing.T) {
	for _, tc := range []struct {
		about, uri, ns, rest string
		mcpx                 bool
	}{
		{"a file URI under a namespace", "mcpx://fs/file:///etc/hosts", "fs", "file:///etc/hosts", true},
		{"the scheme ignores case", "MCPX://fs/a", "fs", "a", true},
		{"no namespace", "mcpx:///file:///x", "", "", true},
		{"nothing after the scheme", "mcpx://", "", "", true},
		{"a namespace without a slash", "mcpx://fs", "", "", true},
		{"an empty upstream URI", "mcpx://fs/", "fs", "", true},
		{"not mcpx", "file:///x", "", "", false},
		{"shorter than the scheme", "mcp", "", "", false},
	} {
		t.Run(tc.about, func(t *testing.T) {
			ns, rest, isMCPX := SplitURI(tc.uri)
			if ns != tc.ns || rest != tc.rest || isMCPX != tc.mcpx {
				t.Errorf("SplitURI(%q) = %q, %q, %v; want %q, %q, %v", tc.uri, ns, rest, isMCPX, tc.ns, tc.rest, tc.mcpx)
			}
		})
	}
}

// FuzzExposedName: whatever an upstream calls a tool and whatever prefix
// it has, the exposed name is valid, and the same every time.
func FuzzExposedName(f *testing.F) {
	f.Add("github__", "create_issue")
	f.Add("ev_", "a.b/c d")
	f.Add("", strings.Repeat("é", 70))
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := ExposedName(prefix, name)
		if !ValidName(got) {
			t.Errorf("ExposedName(%q, %q) = %q: not a valid name", prefix, name, got)
		}
		if again := ExposedName(prefix, name); again != got {
			t.Errorf("ExposedName(%q, %q) = %q, then %q", prefix, name, got, again)
		}
	})
}

// FuzzExposedURI: an exposed URI splits back into its namespace and the
// upstream's URI, whatever that URI holds.
func FuzzExposedURI(f *testing.F) {
	f.Add("everything", "test://static/resource/1")
	f.Add("a-b", "")
	f.Add("ns", "mcpx://other/x")
	f.Fuzz(func(t *testing.T, ns, uri string) {
		if !validNamespace(ns) {
			return
		}
		gotNS, gotURI, ok := SplitURI(ExposedURI(ns, uri))
		if !ok || gotNS != ns || gotURI != uri {
			t.Errorf("SplitURI(ExposedURI(%q, %q)) = %q, %q, %v", ns, uri, gotNS, gotURI, ok)
		}
	})
}

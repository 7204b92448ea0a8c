package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/revision"
)

// errUsage marks an error that is the caller's fault; run exits 2 on it.
var errUsage = errors.New("usage")

func runRevisions(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpx revisions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "revision `REV` to compare from (default: the oldest)")
	to := fs.String("to", "", "revision `REV` to compare to (default: the newest)")
	typ := fs.String("type", "", "hub type `NAME` to restrict the type section to; also prints its members in each revision")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: mcpx revisions [--from REV] [--to REV] [--type NAME]

Prints, from the generated revision tables, what differs between revisions:
methods, members of each hub type, union variants, enum values, server and
client capabilities and reserved _meta keys. Without --from and --to it
compares each revision with the next, oldest to newest; with either it prints
one comparison (from the older to the newer, in either order).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpx revisions: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if err := printRevisions(stdout, *from, *to, *typ); err != nil {
		fmt.Fprintf(stderr, "mcpx revisions: %v\n", err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is an error the caller made; it wraps errUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return errUsage }

// oldestFirst returns the revision tables, oldest first.
func oldestFirst() []*revision.Table {
	ts := slices.Clone(revision.Tables)
	slices.SortStableFunc(ts, func(a, b *revision.Table) int {
		return strings.Compare(string(a.Revision), string(b.Revision)) // dates sort as strings
	})
	return ts
}

// index returns the position of rev in ts, or an error naming the valid revisions.
func index(ts []*revision.Table, flagName, rev string) (int, error) {
	var valid []string
	for i, t := range ts {
		if string(t.Revision) == rev {
			return i, nil
		}
		valid = append(valid, string(t.Revision))
	}
	return 0, &usageError{fmt.Sprintf("unknown revision %q for --%s; valid revisions: %s", rev, flagName, strings.Join(valid, ", "))}
}

// allTypeNames returns every hub type name any revision has, sorted.
func allTypeNames(ts []*revision.Table) []string {
	var names []string
	for _, t := range ts {
		for _, x := range t.Types {
			names = append(names, x.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func printRevisions(w io.Writer, from, to, typ string) error {
	ts := oldestFirst()
	if len(ts) == 0 {
		return errors.New("no revision tables")
	}
	lo, hi := 0, len(ts)-1
	var err error
	if from != "" {
		if lo, err = index(ts, "from", from); err != nil {
			return err
		}
	}
	if to != "" {
		if hi, err = index(ts, "to", to); err != nil {
			return err
		}
	}
	if typ != "" {
		names := allTypeNames(ts)
		if _, found := slices.BinarySearch(names, typ); !found {
			return &usageError{fmt.Sprintf("unknown type %q for --type; valid types: %s", typ, strings.Join(names, ", "))}
		}
	}
	if lo > hi {
		lo, hi = hi, lo
	}

	if from == "" && to == "" {
		for i := 0; i+1 < len(ts); i++ {
			if i > 0 {
				fmt.Fprintln(w)
			}
			printDiff(w, ts[i], ts[i+1], typ)
		}
	} else {
		printDiff(w, ts[lo], ts[hi], typ)
	}

	if typ != "" {
		fmt.Fprintf(w, "\n%s by revision:\n", typ)
		for _, t := range ts[lo : hi+1] {
			printTypeIn(w, t, typ)
		}
	}
	return nil
}

// printDiff prints what differs from table a (older) to table b (newer).
func printDiff(w io.Writer, a, b *revision.Table, typ string) {
	fmt.Fprintf(w, "%s -> %s\n", a.Revision, b.Revision)
	if a == b {
		fmt.Fprintln(w, "  (same revision)")
		return
	}
	n := 0
	line := func(format string, args ...any) {
		fmt.Fprintf(w, "  "+format+"\n", args...)
		n++
	}
	if a.Era != b.Era {
		line("era: %s -> %s", a.Era, b.Era)
	}

	methods := func(t *revision.Table) []string {
		var s []string
		for _, m := range t.Methods {
			s = append(s, m.Name)
		}
		return s
	}
	added, removed := diff(methods(a), methods(b))
	for _, m := range added {
		mb, _ := b.Method(m)
		line("+ method %s (%s)", m, describe(mb))
	}
	for _, m := range removed {
		line("- method %s", m)
	}

	types := func(t *revision.Table) []string {
		var s []string
		for _, x := range t.Types {
			if typ == "" || x.Name == typ {
				s = append(s, x.Name)
			}
		}
		return s
	}
	added, removed = diff(types(a), types(b))
	for _, x := range added {
		line("+ type %s", x)
	}
	for _, x := range removed {
		line("- type %s", x)
	}
	for _, x := range b.Types {
		if typ != "" && x.Name != typ {
			continue
		}
		xa, ok := a.Type(x.Name)
		if !ok {
			continue
		}
		var parts []string
		parts = appendMemberChanges(parts, xa, x)
		parts = appendChanges(parts, "variant ", xa.Variants, x.Variants)
		parts = appendChanges(parts, "value ", xa.Values, x.Values)
		if len(parts) > 0 {
			line("%s: %s", x.Name, strings.Join(parts, ", "))
		}
	}

	for _, c := range []struct {
		what string
		a, b []string
	}{
		{"server capability", a.ServerCapabilities, b.ServerCapabilities},
		{"client capability", a.ClientCapabilities, b.ClientCapabilities},
	} {
		added, removed := diff(c.a, c.b)
		for _, x := range added {
			line("+ %s %s", c.what, x)
		}
		for _, x := range removed {
			line("- %s %s", c.what, x)
		}
	}
	// _meta keys, told apart by their hub names like members.
	for _, p := range appendMemberChanges(nil, revision.Type{Fields: a.MetaKeys, Renamed: a.MetaRenamed}, revision.Type{Fields: b.MetaKeys, Renamed: b.MetaRenamed}) {
		if sign, rest, ok := strings.Cut(p, " "); ok && (sign == "+" || sign == "-") {
			line("%s _meta key %s", sign, rest)
		} else {
			line("_meta key %s", p)
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  (no differences)")
	}
}

// appendMemberChanges appends the member changes from a to b (one hub type
// in two revisions): "+ x" and "- x" in each revision's spelling, and
// "x -> y (renamed)" for a member both have under different names, told
// by the hub name the tables give each spelling.
func appendMemberChanges(parts []string, a, b revision.Type) []string {
	hub := func(t revision.Type) ([]string, map[string]string) {
		var names []string
		spelled := map[string]string{}
		for _, f := range t.Fields {
			h := t.HubName(f)
			names = append(names, h)
			spelled[h] = f
		}
		return names, spelled
	}
	ha, sa := hub(a)
	hb, sb := hub(b)
	added, removed := diff(ha, hb)
	for _, x := range added {
		parts = append(parts, "+ "+sb[x])
	}
	for _, x := range removed {
		parts = append(parts, "- "+sa[x])
	}
	var renamed []string
	for h, old := range sa {
		if nu, ok := sb[h]; ok && nu != old {
			renamed = append(renamed, old+" -> "+nu+" (renamed)")
		}
	}
	slices.Sort(renamed)
	return append(parts, renamed...)
}

// describe says what kind of method m is.
func describe(m revision.Method) string {
	if m.Notification {
		return "notification"
	}
	return "request"
}

// appendChanges appends "+ x" for each member of b not in a, then "- x" for
// each member of a not in b, each with prefix.
func appendChanges(parts []string, prefix string, a, b []string) []string {
	added, removed := diff(a, b)
	for _, x := range added {
		parts = append(parts, "+ "+prefix+x)
	}
	for _, x := range removed {
		parts = append(parts, "- "+prefix+x)
	}
	return parts
}

// diff returns the members of b missing from a (added) and the members of a
// missing from b (removed), each sorted.
func diff(a, b []string) (added, removed []string) {
	in := func(s []string, x string) bool { return slices.Contains(s, x) }
	for _, x := range b {
		if !in(a, x) {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if !in(b, x) {
			removed = append(removed, x)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return slices.Compact(added), slices.Compact(removed)
}

// printTypeIn prints what revision table t has of the hub type name.
func printTypeIn(w io.Writer, t *revision.Table, name string) {
	x, ok := t.Type(name)
	if !ok {
		fmt.Fprintf(w, "  %s: (absent)\n", t.Revision)
		return
	}
	var parts []string
	list := func(label string, s []string) {
		if len(s) > 0 {
			parts = append(parts, label+": "+strings.Join(s, ", "))
		}
	}
	list("fields", x.Fields)
	list("dropped", x.Dropped)
	var renamed []string
	for wire, hub := range x.Renamed {
		renamed = append(renamed, wire+" (hub "+hub+")")
	}
	slices.Sort(renamed)
	list("spelled", renamed)
	list("variants", x.Variants)
	list("values", x.Values)
	if len(parts) == 0 {
		parts = append(parts, "(no members)")
	}
	fmt.Fprintf(w, "  %s:\n", t.Revision)
	for _, p := range parts {
		fmt.Fprintf(w, "    %s\n", p)
	}
}

package streamhttp

import (
	"maps"
	"mime"
	"testing"
)

// FuzzMediaType checks that MediaType's shortcut for the common values
// reads every header as mime.ParseMediaType does.
func FuzzMediaType(f *testing.F) {
	for _, v := range []string{
		"application/json", "Application/JSON", " text/event-stream ", "*/*", "TEXT/EVENT-STREAM",
		"application/json; charset=utf-8", "application/json;q=0", "application/jsonx", "application/json;",
		"", "application", "text/*", "application/json, text/event-stream",
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, gotParams, gotErr := MediaType(v)
		want, wantParams, wantErr := mime.ParseMediaType(v)
		if got != want || (gotErr == nil) != (wantErr == nil) || !maps.Equal(gotParams, wantParams) {
			t.Errorf("MediaType(%q) = %q, %v, %v; mime.ParseMediaType: %q, %v, %v", v, got, gotParams, gotErr, want, wantParams, wantErr)
		}
	})
}

func TestParseAccept(t *testing.T) {
	for v, want := range map[string]accepts{
		"application/json, text/event-stream":    {json: true, sse: true},
		"application/json,text/event-stream;q=0": {json: true},
		"text/event-stream":                      {sse: true},
		" , ":                                    {json: true, sse: true}, // no type at all: lenient
		"*/*":                                    {json: true, sse: true},
		"image/png":                              {},
	} {
		if got := parseAccept([]string{v}); got != want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", v, got, want)
		}
	}
}

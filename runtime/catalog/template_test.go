package catalog

import (
	"maps"
	"testing"
)

func TestParseURITemplate(t *testing.T) {
	tests := []struct {
		name     string
		template string
		wantErr  bool
	}{
		{"literal only", "demo://readme", false},
		{"one variable", "demo://notes/{id}", false},
		{"variable between literals", "test://template/{id}/data", false},
		{"two variables with a separator", "x://{a}/{b}", false},
		{"empty template", "", true},
		{"reserved expansion is level 2", "x://{+path}", true},
		{"fragment expansion is level 2", "x://{#frag}", true},
		{"path-segment expansion is level 3", "x://{/seg}", true},
		{"a variable list is level 3", "x://{a,b}", true},
		{"an explode modifier is level 4", "x://{a*}", true},
		{"a prefix modifier is level 4", "x://{a:3}", true},
		{"unclosed brace", "x://{a", true},
		{"unmatched closing brace", "x://a}", true},
		{"empty expression", "x://{}", true},
		{"repeated variable", "x://{a}/{a}", true},
		{"adjacent variables are ambiguous", "x://{a}{b}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseURITemplate(tt.template)
			if (err != nil) != tt.wantErr {
				t.Errorf("parseURITemplate(%q) error = %v, want error %v", tt.template, err, tt.wantErr)
			}
		})
	}
}

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		name     string
		template string
		uri      string
		want     map[string]string // nil: no match
	}{
		{"literal matches itself", "demo://readme", "demo://readme", map[string]string{}},
		{"literal does not match a longer URI", "demo://readme", "demo://readme2", nil},
		{"regexp metacharacters in literals are literal", "x://a.b?c={v}", "x://a.b?c=1", map[string]string{"v": "1"}},
		{"the dot is not a wildcard", "x://a.b/{v}", "x://aXb/1", nil},
		{"suite template", "test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"unreserved punctuation is part of a value", "x://{v}", "x://a-b_c.d~e", map[string]string{"v": "a-b_c.d~e"}},
		{"percent-escapes are decoded", "x://{v}", "x://caf%C3%A9%2Fbar", map[string]string{"v": "café/bar"}},
		{"a raw slash is not a value", "x://{v}", "x://a/b", nil},
		{"a raw space is not a value", "x://{v}", "x://a b", nil},
		{"a broken escape is not a value", "x://{v}", "x://a%2", nil},
		{"backtracking finds the literal suffix", "x://{name}.txt", "x://a.b.txt", map[string]string{"name": "a.b"}},
		{"prefix must match", "x://notes/{id}", "y://notes/1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := parseURITemplate(tt.template)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := tmpl.match(tt.uri)
			if ok != (tt.want != nil) || !maps.Equal(got, tt.want) {
				t.Errorf("%q.match(%q) = %v, %v; want %v", tt.template, tt.uri, got, ok, tt.want)
			}
		})
	}
}

package mcpjson

import (
	"strings"
	"testing"
)

type splicedDoc struct {
	Content []struct {
		Text string `json:"text"`
		Type string `json:"type"`
	} `json:"content"`
	Meta map[string]string `json:"_meta,omitempty"`
}

func splicedValue(text string) *splicedDoc {
	d := &splicedDoc{Meta: map[string]string{"k": "v"}}
	d.Content = append(d.Content, struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}{text, "text"}, struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}{"short", "text"})
	return d
}

// TestSplicedCopiesIn: a long plain text is copied in, not quoted by the
// encoder (the equivalence tests pass either way), with its escapes
// written by appendQuoted; one quotedLen leaves to the encoder is not.
func TestSplicedCopiesIn(t *testing.T) {
	for text, want := range map[string]int{
		strings.Repeat("x", 64<<10):             1,
		strings.Repeat("x", 64<<10) + "<\"\n\\": 1,
		strings.Repeat("x", 64<<10) + "\x01":    0,
		strings.Repeat("x", 64<<10) + "\u2028":  0,
		strings.Repeat("x", 64<<10) + "\xff":    0,
		"short":                                 0,
	} {
		b, n, err := marshalSpliced(splicedValue(text))
		if err != nil || n != want {
			t.Errorf("%.10q…: %d spliced (%v), want %d", text, n, err, want)
		}
		b.Free()
	}
}

func BenchmarkSpliced(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{{"small", "hello"}, {"64kB", strings.Repeat("x", 64<<10)}, {"64kB JSON", `{"text":"` + strings.Repeat("x", 64<<10) + `"}`}, {"64kB lines", strings.Repeat(strings.Repeat("y", 79)+"\n", 64<<10/80)}} {
		v := splicedValue(c.text)
		b.Run(c.name+"/pooled", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for range b.N {
				buf, _ := MarshalPooled(v)
				buf.Free()
			}
		})
		b.Run(c.name+"/spliced", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for range b.N {
				buf, _ := MarshalSpliced(v)
				buf.Free()
			}
		})
	}
}

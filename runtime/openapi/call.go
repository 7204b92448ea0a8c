package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
)

// excerptLen is how much of an error response's body its result quotes.
const excerptLen = 512

func newClient(src Source) *http.Client {
	tr := src.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	timeout := src.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A redirect stays on the host it started at: the configured
		// headers (an API key) must not follow the call elsewhere.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			if req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("a redirect to another host (%s) was not followed", req.URL.Host)
			}
			return nil
		},
	}
}

// call is one operation's handler.
type call struct {
	api          *api
	method, path string
	where        map[string]param
	wrap         bool // the response goes under "result"
	typed        bool // the tool has an outputSchema
}

// run makes the HTTP request for the arguments (already checked against
// the inputSchema) and turns the response into the tool's result. What
// goes wrong is an isError result the model can read, never a protocol
// error.
func (c *call) run(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(args, &in); err != nil {
		return catalog.ErrorResult("the arguments are not an object: %v", err), nil
	}
	req, err := c.request(ctx, in)
	if err != nil {
		return catalog.ErrorResult("%v", err), nil
	}
	host := req.URL.Host
	resp, err := c.api.client.Do(req)
	if err != nil {
		var ue *url.Error
		switch {
		case errors.As(err, &ue) && ue.Timeout():
			return catalog.ErrorResult("%s did not answer within %s", host, c.api.client.Timeout), nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			return catalog.ErrorResult("the call to %s failed: %v", host, unwrapURL(err)), nil
		}
	}
	defer resp.Body.Close()
	limit := c.api.src.MaxResponse
	if limit <= 0 {
		limit = DefaultMaxResponse
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return catalog.ErrorResult("reading the answer of %s failed: %v", host, unwrapURL(err)), nil
	}
	if int64(len(body)) > limit {
		return catalog.ErrorResult("%s answered with more than %d bytes, the limit (maxResponse)", host, limit), nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return catalog.ErrorResult("%s %s answered HTTP %s: %s", c.method, c.path, resp.Status, excerpt(body)), nil
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case len(body) == 0:
		return catalog.TextResult(fmt.Sprintf("HTTP %s (no content)", resp.Status)), nil
	case isJSON(ct) || (ct == "" && json.Valid(body)):
		return c.jsonResult(body)
	case utf8.Valid(body):
		return catalog.TextResult(string(body)), nil
	default:
		return catalog.TextResult(fmt.Sprintf("HTTP %s: %d bytes of %s", resp.Status, len(body), ct)), nil
	}
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// jsonResult is a JSON answer as text, and as structuredContent when the
// tool declares an outputSchema (an object, or the answer under "result").
func (c *call) jsonResult(body []byte) (*mcp.CallToolResult, error) {
	if !json.Valid(body) {
		return catalog.ErrorResult("the answer says it is JSON and is not: %s", excerpt(body)), nil
	}
	r := catalog.TextResult(string(body))
	if !c.typed {
		return r, nil
	}
	structured := body
	if c.wrap {
		structured, _ = json.Marshal(map[string]json.RawMessage{"result": body})
	} else if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return r, nil // not the object the schema promised: text only
	}
	r.StructuredContent = structured
	return r, nil
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > excerptLen {
		s = s[:excerptLen]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// request builds the HTTP request of the arguments.
func (c *call) request(ctx context.Context, in map[string]json.RawMessage) (*http.Request, error) {
	path := c.path
	query := url.Values{}
	header := http.Header{}
	for key, raw := range in {
		if key == "body" {
			continue
		}
		p, ok := c.where[key]
		if !ok {
			continue // the schema refused unknown members already
		}
		vals, err := values(raw)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %v", key, err)
		}
		switch p.in {
		case "path":
			path = strings.ReplaceAll(path, "{"+p.name+"}", url.PathEscape(strings.Join(vals, ",")))
		case "query":
			if p.explode {
				query[p.name] = append(query[p.name], vals...)
			} else {
				query.Set(p.name, strings.Join(vals, ","))
			}
		case "header":
			header.Set(p.name, strings.Join(vals, ","))
		}
	}
	u := *c.api.base
	u.Path += path
	u.RawQuery = query.Encode()
	var body io.Reader
	if raw, ok := in["body"]; ok {
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range c.api.src.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	return req, nil
}

// values is an argument as the strings a path, query or header carries:
// a string as it is, a number or boolean as written, an array item by
// item.
func values(raw json.RawMessage) ([]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 12345678901234567890 stays as written
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var one func(any) (string, error)
	one = func(x any) (string, error) {
		switch x := x.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case bool:
			return strconv.FormatBool(x), nil
		case nil:
			return "", nil
		}
		return "", errors.New("an object cannot be sent in a path, query or header")
	}
	if arr, ok := v.([]any); ok {
		out := make([]string, 0, len(arr))
		for _, x := range arr {
			s, err := one(x)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := one(v)
	return []string{s}, err
}

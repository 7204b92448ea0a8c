package h1

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"golang.org/x/net/http/httpguts"
)

// maxPlainHeaders is how many header names a request may have for
// writeRequest to write its head itself; one with more goes to
// [http.Request.Write].
const maxPlainHeaders = 24

// writeRequest writes req to bw as [http.Request.Write] does, byte for
// byte, and closes its body. A request as mcpx makes them (a known
// length, plain ASCII host, header values without line breaks or
// surrounding space) has its head written here: Request.Write spends
// fmt.Fprintf on its first lines and a sorted copy of the headers from a
// pool on the rest, a twentieth of a small call's CPU in mcpx
// (BENCHMARKS.md, twelfth round). Any other request is Request.Write's.
// Neither way reports httptrace events: h1 reports none. Unlike
// Request.Write, the head is not flushed on its own before a body that is
// not in memory: mcpx's bodies are, and the head goes in the body's first
// write.
func writeRequest(bw *bufio.Writer, req *http.Request) error {
	host, ruri, ok := plainRequest(req)
	if !ok {
		return req.Write(bw)
	}
	var keys [maxPlainHeaders]string
	names, ok := plainHeader(req.Header, keys[:0])
	if !ok {
		return req.Write(bw)
	}
	ua := "Go-http-client/1.1" // net/http's default User-Agent
	if v, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(v) > 0 {
			ua = v[0]
		}
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}

	bw.WriteString(method)
	bw.WriteByte(' ')
	bw.WriteString(ruri)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	if ua != "" {
		bw.WriteString("User-Agent: ")
		bw.WriteString(ua)
		bw.WriteString("\r\n")
	}
	length := req.ContentLength
	if length > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), length, 10))
		bw.WriteString("\r\n")
	}
	for _, k := range names {
		for _, v := range req.Header[k] {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	_, err := bw.WriteString("\r\n")
	if length > 0 && err == nil {
		err = writeBody(bw, req.Body, length)
	}
	if req.Body != nil {
		if cerr := req.Body.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// writeBody copies length bytes of body to bw, as the Transport does (so a
// long body goes to the connection's ReadFrom once the head is flushed),
// and fails as it does when body holds fewer or more.
func writeBody(bw *bufio.Writer, body io.Reader, length int64) error {
	n, err := io.Copy(bw, io.LimitReader(body, length))
	if err != nil {
		return err
	}
	var one [1]byte
	extra, _ := io.ReadFull(body, one[:])
	if n != length || extra > 0 {
		return fmt.Errorf("http: ContentLength=%d with Body length %d", length, n+int64(extra))
	}
	return nil
}

// plainRequest reports whether the head of req is one writeRequest
// writes, with its Host and request target: a known length, no
// Connection: close, transfer encoding or trailer, a host Request.Write
// would send unchanged, a target without control bytes.
func plainRequest(req *http.Request) (host, ruri string, ok bool) {
	if req.URL == nil || req.Close || req.TransferEncoding != nil || req.Trailer != nil || req.Method == http.MethodConnect {
		return "", "", false
	}
	noBody := req.Body == nil || req.Body == http.NoBody
	if noBody && req.ContentLength != 0 || !noBody && req.ContentLength <= 0 {
		return "", "", false
	}
	if req.Method != "" && !token(req.Method) {
		return "", "", false
	}
	host = req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !plainHost(host) {
		return "", "", false
	}
	ruri = req.URL.RequestURI()
	for i := 0; i < len(ruri); i++ {
		if ruri[i] < ' ' || ruri[i] == 0x7f {
			return "", "", false
		}
	}
	return host, ruri, true
}

// plainHost reports whether h is a host and port Request.Write sends as
// it is: ASCII letters, digits and the punctuation of names and IP
// literals, without an IPv6 zone (which it removes).
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '-', c == ':', c == '[', c == ']', c == '_':
		default:
			return false
		}
	}
	return true
}

// token reports whether s is an HTTP token (a method).
func token(s string) bool {
	for i := 0; i < len(s); i++ {
		if !httpguts.IsTokenRune(rune(s[i])) {
			return false
		}
	}
	return s != ""
}

// plainHeader appends to keys, sorted, the names of h that Request.Write
// writes from the map (not Host, User-Agent, Content-Length,
// Transfer-Encoding or Trailer, nor an invalid name, which it drops), and
// reports whether every value it writes, User-Agent's too, goes as it is:
// no line break, no space or tab at either end (which it would replace or
// trim).
func plainHeader(h http.Header, keys []string) ([]string, bool) {
	for k, vs := range h {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		case "User-Agent":
			if len(vs) > 0 && !plainValue(vs[0]) {
				return nil, false
			}
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		if len(keys) == cap(keys) {
			return nil, false
		}
		for _, v := range vs {
			if !plainValue(v) {
				return nil, false
			}
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, true
}

// plainValue reports whether v is written as it is: no CR or LF, no
// leading or trailing space or tab (textproto.TrimString's ASCII space).
func plainValue(v string) bool {
	if v == "" {
		return true
	}
	if space(v[0]) || space(v[len(v)-1]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '\r' || v[i] == '\n' {
			return false
		}
	}
	return true
}

func space(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

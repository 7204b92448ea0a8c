package replicatest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tlsFiles are a self-signed certificate for 127.0.0.1 and its key, in
// PEM files.
type tlsFiles struct{ cert, key string }

func newTLSFiles(t testing.TB) *tlsFiles {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "replicatest redis"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &tlsFiles{cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem")}
	os.WriteFile(f.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(f.key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return f
}

// TestRedisOverTLS: mcpx.store rediss:// with a password from ${VAR}:
// two replicas share tasks over TLS, the server's CA trusted the way any
// Go program's is (SSL_CERT_FILE).
func TestRedisOverTLS(t *testing.T) {
	c := start(t, setup{replicas: 2, redis: true, tls: true, password: "tls-pass-for-tests"})
	m := &modern{t: t, url: c.url, token: aliceToken}
	id := newTask(t, m, "fx__slow_compute", `{"seconds":1,"label":"tls"}`)
	res := m.until(id, 20*time.Second, status("completed"))
	if !strings.Contains(text(res), "Computed tls") {
		t.Errorf("over TLS: %v", res)
	}
}

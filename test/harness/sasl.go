package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// SASLLogin connects to addr (a SASL listener), authenticates with m and
// asks for metadata, without retries; it returns the client's error
// (SASL_AUTHENTICATION_FAILED: … for a refused login). opts add to the
// client's (kgo.DialTLSConfig for SASL_SSL).
func SASLLogin(addr string, m sasl.Mechanism, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

// WaitSASL polls SASLLogin on each address until it succeeds (ok) or is
// refused with SASL_AUTHENTICATION_FAILED (!ok), at most 20 s per
// address (opts as SASLLogins): a credential change reaches each broker from its
// /config/changes notification, asynchronously, with no event a test
// outside the broker could await.
func WaitSASL(t testing.TB, what string, addrs []string, m sasl.Mechanism, ok bool, opts ...kgo.Opt) {
	t.Helper()
	for _, a := range addrs {
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := SASLLogin(a, m, opts...)
			if ok && err == nil || !ok && err != nil && strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s on %s: still %v after 20s", what, a, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

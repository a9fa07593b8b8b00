package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gregor/test/harness"
)

// writeProps writes a client.properties file.
func writeProps(t *testing.T, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestToolsSASLAgainstBroker: the tools authenticate to a real broker's
// SASL_PLAINTEXT listener with PLAIN (a JAAS user) and SCRAM-SHA-256 and
// -512 (a user created with kafka-configs.sh), each from its config file;
// a wrong password is a readable SASL error and a non-zero exit.
func TestToolsSASLAgainstBroker(t *testing.T) {
	saslPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{
		"listeners":               fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d", saslPort),
		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_alice="alice-secret";`,
	})
	sasl := fmt.Sprintf("127.0.0.1:%d", saslPort)
	code, out, errs := cliRun(t, nil, "", "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--alter",
		"--add-config", "SCRAM-SHA-256=[iterations=4096,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]")
	if code != 0 {
		t.Fatalf("creating carol: exit %d\n%s\n%s", code, out, errs)
	}
	jaas := func(module, user, pass string) string {
		return fmt.Sprintf(`sasl.jaas.config=org.apache.kafka.common.security.%s required username="%s" password="%s";`, module, user, pass)
	}
	plain := writeProps(t, "plain.properties", "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", jaas("plain.PlainLoginModule", "alice", "alice-secret"))
	scram256 := writeProps(t, "scram256.properties", "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-256", jaas("scram.ScramLoginModule", "carol", "carol-secret"))
	scram512 := writeProps(t, "scram512.properties", "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512", jaas("scram.ScramLoginModule", "carol", "carol-secret"))

	code, out, errs = cliRun(t, nil, "", "topics", "--bootstrap-server", sasl, "--command-config", plain, "--create", "--topic", "sasl-t", "--partitions", "1", "--replication-factor", "1")
	if code != 0 || !strings.Contains(out, "Created topic sasl-t.") {
		t.Fatalf("topics --create over PLAIN: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cliRunIn(t, nil, "a\nb\n", "", "console-producer", "--bootstrap-server", sasl, "--topic", "sasl-t", "--producer.config", scram256)
	if code != 0 {
		t.Fatalf("console-producer over SCRAM-SHA-256: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "", "console-consumer", "--bootstrap-server", sasl, "--topic", "sasl-t", "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000", "--consumer.config", scram512)
	if code != 0 || out != "a\nb\n" {
		t.Fatalf("console-consumer over SCRAM-SHA-512: exit %d stdout %q\n%s", code, out, errs)
	}

	wrong := writeProps(t, "wrong.properties", "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-256", jaas("scram.ScramLoginModule", "carol", "not-her-password"))
	code, out, errs = cliRun(t, nil, "", "topics", "--bootstrap-server", sasl, "--command-config", wrong, "--list")
	if code == 0 || !strings.Contains(out+errs, "SASL_AUTHENTICATION_FAILED") || strings.Contains(out+errs, "not-her-password") {
		t.Fatalf("wrong password: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestAdminListenerProtection: a broker refuses to start with its admin
// listener on every interface and no protection (a clear error, exit 1);
// with admin.listener.auth.token.file it starts and answers 401 without
// the token, 200 with it, and `gregor admin --command-config` with
// auth.token.file gets through.
func TestAdminListenerProtection(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.properties")
	port := harness.FreePort(t)
	body := fmt.Sprintf("broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%d\nlog.dirs=%s\nadmin.listener=0.0.0.0:%d\n", harness.FreePort(t), filepath.Join(dir, "data"), port)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary(t), "server", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "beyond loopback without protection") {
		t.Fatalf("unprotected 0.0.0.0 admin listener: %v\n%s", err, out)
	}

	token := filepath.Join(dir, "admin.token")
	if err := os.WriteFile(token, []byte("t0ken-abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	adminPort := harness.FreePort(t)
	harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("0.0.0.0:%d", adminPort), "admin.listener.auth.token.file": token})
	url := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	for _, tc := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer nope", http.StatusUnauthorized}, {"Bearer t0ken-abc", http.StatusOK}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
	props := writeProps(t, "admin.properties", "auth.token.file="+token)
	code, stdout, errs := cliRun(t, nil, "", "admin", "--admin-url", url, "--command-config", props, "actors")
	if code != 0 || !strings.Contains(stdout, "replica-manager") {
		t.Errorf("gregor admin actors with the token: exit %d\n%s\n%s", code, stdout, errs)
	}
	code, _, errs = cliRun(t, nil, "", "admin", "--admin-url", url, "actors")
	if code == 0 || !strings.Contains(errs, "401") {
		t.Errorf("gregor admin actors without the token: exit %d %s", code, errs)
	}
}

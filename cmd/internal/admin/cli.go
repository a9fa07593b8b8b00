package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gregor/actors"
)

// Client talks to a broker's admin listener (the `gregor admin` tool).
type Client struct {
	// URL is the admin listener's base URL, e.g. "http://127.0.0.1:9644".
	URL string
	HC  *http.Client
}

func (c *Client) url(path string) string {
	base := strings.TrimRight(c.URL, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base + path
}

func (c *Client) hc() *http.Client {
	if c.HC != nil {
		return c.HC
	}
	return http.DefaultClient
}

func readErr(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
}

// Fault posts f to /faults and returns the JSON answer.
func (c *Client) Fault(ctx context.Context, f FaultRequest) (FaultResponse, error) {
	body, _ := json.Marshal(f)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url("/faults"), strings.NewReader(string(body)))
	if err != nil {
		return FaultResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc().Do(req)
	if err != nil {
		return FaultResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return FaultResponse{}, readErr(resp)
	}
	var out FaultResponse
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// Actors fetches /actors (kind "" = all).
func (c *Client) Actors(ctx context.Context, kind string) ([]actors.ActorInfo, error) {
	u := c.url("/actors")
	if kind != "" {
		u += "?kind=" + url.QueryEscape(kind)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, readErr(resp)
	}
	var out []actors.ActorInfo
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// PrintActors writes the actors as an aligned table.
func PrintActors(w io.Writer, list []actors.ActorInfo) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tKIND\tRESTARTS\tMAILBOX\tRECEIVED")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", a.Path, a.Kind, a.Restarts, a.Mailbox, a.Received)
	}
	tw.Flush()
}

// TraceQuery selects a /trace stream.
type TraceQuery struct {
	Kinds   []string
	Topic   string
	Actor   string
	Limit   int
	Seconds float64
}

// Trace streams /trace JSON lines to w until the stream ends or ctx is
// cancelled.
func (c *Client) Trace(ctx context.Context, q TraceQuery, w io.Writer) error {
	return c.stream(ctx, q, func(line []byte) error {
		_, err := fmt.Fprintf(w, "%s\n", line)
		return err
	})
}

// stream GETs /trace with q and calls fn with each JSON line until the
// stream ends, fn fails or ctx is cancelled (a cancellation is not an
// error).
func (c *Client) stream(ctx context.Context, q TraceQuery, fn func(line []byte) error) error {
	v := url.Values{}
	for _, k := range q.Kinds {
		v.Add("kind", k)
	}
	if q.Topic != "" {
		v.Set("topic", q.Topic)
	}
	if q.Actor != "" {
		v.Set("actor", q.Actor)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Seconds > 0 {
		v.Set("seconds", strconv.FormatFloat(q.Seconds, 'f', -1, 64))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/trace?"+v.Encode()), nil)
	if err != nil {
		return err
	}
	hc := *c.hc()
	hc.Timeout = 0 // a stream
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return readErr(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// DefaultTimeout bounds the non-streaming admin calls.
const DefaultTimeout = 10 * time.Second

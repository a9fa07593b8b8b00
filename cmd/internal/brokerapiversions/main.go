// Package brokerapiversions is `gregor broker-api-versions`
// (kafka-broker-api-versions.sh, Kafka's BrokerApiVersionsCommand): for
// every broker in the cluster's metadata, the API versions it answers in
// ApiVersions, with the newest version this client (franz-go's kmsg) and
// the broker share, formatted as Kafka's NodeApiVersions.toString(true).
package brokerapiversions

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// Options are kafka-broker-api-versions.sh's flags.
type Options struct {
	BootstrapServer string // --bootstrap-server (required)
}

// Main runs kafka-broker-api-versions.sh and returns the exit status: 0
// once every broker's block is printed (a broker that cannot be asked
// gets an "ERROR: …" line, as in Kafka), 1 for bad flags or when the
// cluster's metadata cannot be read.
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	if o.BootstrapServer == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[bootstrap-server]\""))
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	brokers := meta.Brokers
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].NodeID < brokers[j].NodeID })
	for _, b := range brokers {
		rack := "null"
		if b.Rack != nil {
			rack = *b.Rack
		}
		node := fmt.Sprintf("%s:%d (id: %d rack: %s)", b.Host, b.Port, b.NodeID, rack)
		req := kmsg.NewPtrApiVersionsRequest()
		// v3+ must name the client (KIP-511) or the broker answers
		// INVALID_REQUEST.
		req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-broker-api-versions", "1.0"
		resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s -> ERROR: %s\n", node, clientutil.JavaException(err))
			continue
		}
		fmt.Fprintf(stdout, "%s -> %s\n", node, Format(resp.ApiKeys))
	}
	return 0
}

// Format renders a broker's ApiVersions keys as Kafka's
// NodeApiVersions.toString(true): "(\n\t" + one entry per key, ascending,
// joined by ",\n\t" + "\n)". An entry is "Name(key): min to max" (or
// "Name(key): v" when min == max) followed by " [usable: v]" (the newest
// version both this client and the broker speak), " [unusable: node too
// new]" or " [unusable: node too old]"; a key the broker does not list
// that Kafka's clients may send is "Name(key): UNSUPPORTED"; a key Kafka
// 3.9 does not know is "UNKNOWN(key): min to max".
func Format(keys []kmsg.ApiVersionsResponseApiKey) string {
	text := map[int16]string{}
	known := map[int16]string{}
	for _, k := range apiKeys {
		known[k.key] = k.name
	}
	for _, k := range keys {
		name, ok := known[k.ApiKey]
		var b strings.Builder
		if ok {
			fmt.Fprintf(&b, "%s(%d): ", name, k.ApiKey)
		} else {
			fmt.Fprintf(&b, "UNKNOWN(%d): ", k.ApiKey)
		}
		if k.MinVersion == k.MaxVersion {
			fmt.Fprintf(&b, "%d", k.MinVersion)
		} else {
			fmt.Fprintf(&b, "%d to %d", k.MinVersion, k.MaxVersion)
		}
		if ok {
			b.WriteString(usable(k.ApiKey, k.MinVersion, k.MaxVersion))
		}
		text[k.ApiKey] = b.String()
	}
	for _, k := range apiKeys {
		if _, ok := text[k.key]; !ok && k.client {
			text[k.key] = fmt.Sprintf("%s(%d): UNSUPPORTED", k.name, k.key)
		}
	}
	order := make([]int16, 0, len(text))
	for k := range text {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	lines := make([]string, len(order))
	for i, k := range order {
		lines[i] = text[k]
	}
	return "(\n\t" + strings.Join(lines, ",\n\t") + "\n)"
}

// usable is the client-side verdict on a broker range: this client
// speaks versions 0..kmsg's MaxVersion of key (none when kmsg lacks it).
func usable(key, brokerMin, brokerMax int16) string {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return " [unusable: node too new]"
	}
	clientMax := req.MaxVersion()
	switch {
	case clientMax < brokerMin:
		return " [unusable: node too new]"
	case brokerMax < 0:
		return " [unusable: node too old]"
	}
	return fmt.Sprintf(" [usable: %d]", min(clientMax, brokerMax))
}

package clientutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// FetchError returns the first error a poll's fetches carry, as "consuming
// <topic> partition <n>: <err>", or nil. Context deadline and cancellation
// errors are skipped: they only say the poll's own timeout or the tool's
// context ended it, which the caller checks itself.
func FetchError(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(t string, p int32, e error) {
		if first == nil && !errors.Is(e, context.DeadlineExceeded) && !errors.Is(e, context.Canceled) {
			first = fmt.Errorf("consuming %s partition %d: %w", t, p, e)
		}
	})
	return first
}

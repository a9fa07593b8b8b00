package record

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkValidate measures Validate+ValidateRecords on a ~100 KiB batch
// of 1000 records per codec; MB/s is over the uncompressed records.
//
//	go test ./storage/record -run '^$' -bench Validate -benchmem
func BenchmarkValidate(b *testing.B) {
	benchValidateCodecs(b, func(h Header, bb []byte) error {
		return ValidateRecords(h, bb, 1<<20, true)
	})
}

// BenchmarkValidateCheckRecords measures Validate+CheckRecords with the
// produce path's rules (keys required, timestamps bounded) on the batch
// of BenchmarkValidate: a valid batch, so no record errors are collected.
//
//	go test ./storage/record -run '^$' -bench ValidateCheckRecords -benchmem
func BenchmarkValidateCheckRecords(b *testing.B) {
	rules := Rules{MaxUncompressed: 1 << 20, KeyRequired: true, Now: 500, MaxTimestampDiff: 1000}
	benchValidateCodecs(b, func(h Header, bb []byte) error {
		_, err := CheckRecords(h, bb, rules)
		return err
	})
}

// benchValidateCodecs builds the ~100 KiB batch of 1000 records in every
// codec and, per codec, measures Validate followed by check on what it
// returns; MB/s is over the uncompressed records.
func benchValidateCodecs(b *testing.B, check func(Header, []byte) error) {
	recs := make([]BatchRecord, 1000)
	for i := range recs {
		recs[i] = BatchRecord{
			Key:            []byte(fmt.Sprintf("key-%06d", i)),
			Value:          bytes.Repeat([]byte{byte('a' + i%26)}, 90),
			Headers:        []RecordHeader{{Key: []byte("h"), Value: []byte("v")}},
			TimestampDelta: int64(i),
		}
	}
	plain, _ := BuildBatch(BatchOptions{}, recs)
	raw := len(plain) - HeaderSize
	for _, codec := range allCodecs {
		batch, err := BuildBatch(BatchOptions{Codec: codec}, recs)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(codec.String(), func(b *testing.B) {
			b.SetBytes(int64(raw))
			b.ReportAllocs()
			for b.Loop() {
				h, bb, err := Validate(batch)
				if err != nil {
					b.Fatal(err)
				}
				if err := check(h, bb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

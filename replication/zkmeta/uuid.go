package zkmeta

import (
	"crypto/rand"
	"strings"
)

// RandomUUID returns a random (version 4) Kafka Uuid, skipping the values
// Kafka reserves or avoids: the zero Uuid, the metadata topic id
// (0…01) and any whose string form starts with "-" (it would parse as a
// command-line flag; Uuid.randomUuid does the same).
func RandomUUID() [16]byte {
	for {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			panic("zkmeta: crypto/rand failed: " + err.Error()) // never on Linux ≥ 3.17
		}
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // IETF variant
		if u == ([16]byte{}) || u == ([16]byte{15: 1}) || strings.HasPrefix(UUIDString(u), "-") {
			continue
		}
		return u
	}
}

package clientquota

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatValue checks a quota value for key as AlterClientQuotas does and
// returns the string stored in the znode: a LONG key (the byte rates)
// must be integral (within 1e-6, "Configuration producer_byte_rate must
// be a LONG value", ZkAdminManager) and is stored as an integer; a DOUBLE
// key is stored as Java prints a double. Every value must be a finite
// number above 0 ("Quota producer_byte_rate must be greater than 0", as
// Kafka's KRaft controller answers; ZooKeeper-mode Kafka stores it and
// then enforces nonsense). An unknown key is "Invalid configuration key
// k". Errors carry the message of the INVALID_REQUEST answer.
func FormatValue(key string, v float64) (string, error) {
	t, ok := TypeOfKey(key)
	if !ok {
		return "", fmt.Errorf("Invalid configuration key %s", key)
	}
	if math.IsNaN(v) || v <= 0 {
		return "", fmt.Errorf("Quota %s must be greater than 0", key)
	}
	if math.IsInf(v, 0) {
		return "", fmt.Errorf("Quota %s must be a finite number", key)
	}
	if t.IsLong() {
		const epsilon = 1e-6
		if v+epsilon >= math.MaxInt64 {
			return "", fmt.Errorf("Configuration %s must be a LONG value", key)
		}
		n := int64(v + epsilon)
		if math.Abs(float64(n)-v) > epsilon {
			return "", fmt.Errorf("Configuration %s must be a LONG value", key)
		}
		return strconv.FormatInt(n, 10), nil
	}
	return FormatDouble(v), nil
}

// FormatDouble prints v as Java's Double.toString does (1048576.0,
// 0.5, 1.0E7), which is how Kafka's tools print quota values.
func FormatDouble(v float64) string {
	a := math.Abs(v)
	if a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64) // 1E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

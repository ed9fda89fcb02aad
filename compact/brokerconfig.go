package compact

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseBrokerConfig takes the log cleaner's broker settings out of kv (as
// given with `partfs mount --config KEY=VALUE`): log.cleaner.enable,
// log.cleaner.threads, log.cleaner.io.max.bytes.per.second,
// log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor and
// log.cleaner.backoff.ms. It returns the options, whether the cleaner is
// enabled (default true), and the other keys untouched.
func ParseBrokerConfig(kv map[string]string) (opt BackgroundOptions, enabled bool, rest map[string]string, err error) {
	enabled = true
	rest = map[string]string{}
	for k, v := range kv {
		if !strings.HasPrefix(k, "log.cleaner.") {
			rest[k] = v
			continue
		}
		if err := setBroker(&opt, &enabled, k, v); err != nil {
			return opt, false, nil, fmt.Errorf("%s=%s: %w", k, v, err)
		}
	}
	return opt, enabled, rest, nil
}

func setBroker(opt *BackgroundOptions, enabled *bool, k, v string) error {
	var err error
	switch k {
	case "log.cleaner.enable":
		*enabled, err = strconv.ParseBool(v)
	case "log.cleaner.threads":
		opt.Threads, err = positiveInt(v)
	case "log.cleaner.io.max.bytes.per.second":
		opt.IOMaxBytesPerSecond, err = strconv.ParseFloat(v, 64)
	case "log.cleaner.dedupe.buffer.size":
		opt.DedupeBufferSize, err = strconv.ParseInt(v, 10, 64)
		if err == nil && opt.DedupeBufferSize < 2*SlotBytes {
			err = fmt.Errorf("less than two offset map slots")
		}
	case "log.cleaner.io.buffer.load.factor":
		opt.LoadFactor, err = strconv.ParseFloat(v, 64)
		if err == nil && (opt.LoadFactor <= 0 || opt.LoadFactor > 1) {
			err = fmt.Errorf("not in (0, 1]")
		}
	case "log.cleaner.backoff.ms":
		var ms int
		ms, err = positiveInt(v)
		opt.Backoff = time.Duration(ms) * time.Millisecond
	default:
		err = fmt.Errorf("unknown log cleaner setting")
	}
	return err
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n <= 0 {
		err = fmt.Errorf("must be > 0")
	}
	return n, err
}

package main

import (
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	"github.com/urfave/cli/v2"
)

// statsWhatIfCodecs reads stats' --what-if and --sample: the codecs to try
// (nil without --what-if).
func statsWhatIfCodecs(c *cli.Context) ([]format.Compression, error) {
	var codecs []format.Compression
	if c.IsSet(statsWhatIfFlag.Name) {
		var err error
		if codecs, err = inspect.ParseWhatIfCodecs(c.String(statsWhatIfFlag.Name)); err != nil {
			return nil, usageError("stats: --what-if: %v", err)
		}
	}
	if s := c.Float64(statsSampleFlag.Name); s <= 0 || s > 1 {
		return nil, usageError("stats: --sample must be in (0, 1], got %v", s)
	}
	if c.IsSet(statsSampleFlag.Name) && codecs == nil {
		return nil, usageError("stats: --sample needs --what-if")
	}
	return codecs, nil
}

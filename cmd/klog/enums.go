package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// enumFlags are the flags whose value is one of a closed list: every
// spelling the flag's own parser accepts. A value outside it is a usage
// error before the command runs, with a "did you mean" when one is close
// (read_comitted: did you mean read_committed?), the same for every such
// flag of every command (checkEnums). TestEnumFlagsParse checks each
// value against the flag's parser. (--key-format and --value-format say
// the same through schema.ParseFormat, parseFormatFlag.)
var enumFlags = map[cli.Flag][]string{
	fetchIsoFlag:   isolationNames,
	offsetsIsoFlag: isolationNames,
	keyEncFlag:     append([]string{""}, encodingNames...),
	valueEncFlag:   append([]string{""}, encodingNames...),
	fetchResetFlag: {"earliest", "latest", "none"},
	prodCodecFlag:  {"none", "gzip", "snappy", "lz4", "zstd"},
	prodAcksFlag:   {"0", "1", "all", "-1"},
	replAcksFlag:   {"0", "1", "all", "-1"},
	prodInputFlag:  {"", "lines", "json"},
	prodTSTypeFlag: {"create", "log-append", "CreateTime", "LogAppendTime"},
	prodFsyncFlag:  {"batch", "end", "never"},
	prodEndTxnFlag: {"", "commit", "abort"},
}

// checkEnums refuses a value of an enumFlags flag that is not in its list.
func checkEnums(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		names, ok := enumFlags[f]
		if !ok || !c.IsSet(f.Names()[0]) {
			continue
		}
		v := c.String(f.Names()[0])
		if slices.Contains(names, v) {
			continue
		}
		var shown []string
		for _, n := range names {
			if n != "" {
				shown = append(shown, n)
			}
		}
		list := shown[len(shown)-1]
		if len(shown) > 1 {
			list = strings.Join(shown[:len(shown)-1], ", ") + " or " + list
		}
		msg := "want " + list + ", got " + strconv.Quote(v)
		if s := suggest(v, shown); s != "" {
			msg += " (did you mean " + s + "?)"
		}
		return usageError("%s: --%s: %s", commandPath(c), f.Names()[0], msg)
	}
	return nil
}

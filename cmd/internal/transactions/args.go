package transactions

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Prog is the program name Kafka's tool gives argparse4j; its usage and
// parse errors start with it.
const Prog = "kafka-transactions.sh"

// Flag is one sub-command option, as TransactionsCommand's addSubparser
// declares it: Name without the dashes, Type the Java type argparse4j
// converts the value to (String, Integer, Long or Short), Default the value
// when absent ("" = none).
type Flag struct {
	Name     string
	Type     string
	Help     string
	Required bool
	Default  string
}

// Command is one sub-command of kafka-transactions.sh with its options in
// Kafka's declaration order (the order argparse4j checks and prints them).
type Command struct {
	Name  string
	Help  string
	Flags []Flag
}

// Commands are kafka-transactions.sh's sub-commands, in Kafka's order.
var Commands = []Command{
	{Name: "list", Help: "list transactions", Flags: []Flag{
		{Name: "duration-filter", Type: "Long", Help: "only transactions running for longer than this many milliseconds (negative: every transaction)"},
	}},
	{Name: "describe", Help: "describe the state of an active transactional-id", Flags: []Flag{
		{Name: "transactional-id", Type: "String", Help: "transactional id", Required: true},
	}},
	{Name: "describe-producers", Help: "describe the states of active producers for a topic partition", Flags: []Flag{
		{Name: "broker-id", Type: "Integer", Help: "describe the producer state on this replica instead of the leader"},
		{Name: "topic", Type: "String", Help: "topic name", Required: true},
		{Name: "partition", Type: "Integer", Help: "partition number", Required: true},
	}},
	{Name: "abort", Help: "abort a hanging transaction (needs cluster administrative rights)", Flags: []Flag{
		{Name: "topic", Type: "String", Help: "topic name", Required: true},
		{Name: "partition", Type: "Integer", Help: "partition number", Required: true},
		{Name: "start-offset", Type: "Long", Help: "start offset of the transaction to abort (brokers on versions 3.0 and above)"},
		{Name: "producer-id", Type: "Long", Help: "producer id (brokers on versions older than 3.0)"},
		{Name: "producer-epoch", Type: "Short", Help: "producer epoch (brokers on versions older than 3.0)"},
		{Name: "coordinator-epoch", Type: "Integer", Help: "coordinator epoch (brokers on versions older than 3.0)"},
	}},
	{Name: "find-hanging", Help: "find hanging transactions", Flags: []Flag{
		{Name: "broker-id", Type: "Integer", Help: "broker id to search for hanging transactions"},
		{Name: "max-transaction-timeout", Type: "Integer", Help: "only transactions open for longer than this many minutes (default 15)", Default: "15"},
		{Name: "topic", Type: "String", Help: "search only this topic (needed with --partition)"},
		{Name: "partition", Type: "Integer", Help: "partition number"},
	}},
}

func findCommand(name string) *Command {
	for i := range Commands {
		if Commands[i].Name == name {
			return &Commands[i]
		}
	}
	return nil
}

// UsageError is a command line that argparse4j rejects: Kafka's tool
// prints the usage of Command ("" = the top level) and
// "kafka-transactions.sh[ command]: error: Msg" on stderr and exits 1.
type UsageError struct {
	Command string
	Msg     string
}

func (e *UsageError) Error() string { return e.Msg }

// PrintUsageError writes e as argparse4j's handleError does and returns
// the exit status, 1.
func PrintUsageError(w io.Writer, e *UsageError) int {
	fmt.Fprintln(w, usageLine(e.Command))
	prog := Prog
	if e.Command != "" {
		prog += " " + e.Command
	}
	fmt.Fprintf(w, "%s: error: %s\n", prog, e.Msg)
	return 1
}

// usageLine is argparse4j's usage for the top level or one command, on one
// line (argparse4j wraps it at the terminal width).
func usageLine(command string) string {
	if c := findCommand(command); c != nil {
		var b strings.Builder
		b.WriteString("usage: " + Prog + " " + c.Name + " [-h]")
		for _, f := range c.Flags {
			arg := "--" + f.Name + " " + metavar(f.Name)
			if f.Required {
				b.WriteString(" " + arg)
			} else {
				b.WriteString(" [" + arg + "]")
			}
		}
		return b.String()
	}
	return "usage: " + Prog + " [-h] [-v] [--command-config FILE] --bootstrap-server host:port COMMAND ..."
}

// metavar is argparse4j's default metavar: the destination in upper case.
func metavar(flag string) string {
	return strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// args are one command's parsed options; a flag absent and without a
// default is not in the maps.
type args struct {
	str map[string]string
	num map[string]int64
}

func (a args) has(name string) bool {
	_, s := a.str[name]
	_, n := a.num[name]
	return s || n
}

// parseArgs converts and checks the raw option values of command as
// argparse4j does: each value to its Java type (an unconvertible one is
// "argument --x: could not convert 'v' to Integer (For input string:
// "v")"), then the first missing required option in declaration order
// ("argument --x is required"). Errors are *UsageError.
func parseArgs(command string, raw map[string]string) (args, error) {
	c := findCommand(command)
	if c == nil {
		names := make([]string, len(Commands))
		for i, c := range Commands {
			names[i] = "'" + c.Name + "'"
		}
		return args{}, &UsageError{Msg: fmt.Sprintf("argument COMMAND: invalid choice: '%s' (choose from %s)", command, strings.Join(names, ", "))}
	}
	a := args{str: map[string]string{}, num: map[string]int64{}}
	known := map[string]bool{}
	for _, f := range c.Flags {
		known[f.Name] = true
		v, ok := raw[f.Name]
		if !ok {
			v, ok = f.Default, f.Default != ""
		}
		if !ok {
			continue
		}
		if f.Type == "String" {
			a.str[f.Name] = v
			continue
		}
		n, err := strconv.ParseInt(v, 10, javaBits[f.Type])
		if err != nil {
			return args{}, &UsageError{Command: command, Msg: fmt.Sprintf("argument --%s: could not convert '%s' to %s (For input string: \"%s\")", f.Name, v, f.Type, v)}
		}
		a.num[f.Name] = n
	}
	for name := range raw {
		if !known[name] {
			return args{}, &UsageError{Command: command, Msg: fmt.Sprintf("unrecognized arguments: '--%s'", name)}
		}
	}
	for _, f := range c.Flags {
		if f.Required && !a.has(f.Name) {
			return args{}, &UsageError{Command: command, Msg: "argument --" + f.Name + " is required"}
		}
	}
	return a, nil
}

// javaBits are the widths of argparse4j's numeric target types.
var javaBits = map[string]int{"Short": 16, "Integer": 32, "Long": 64}

// FlagError turns a command-line parser error for command ("" = the top
// level) into argparse4j's wording: an unknown option is "unrecognized
// arguments: '--x'", an option without its value "argument --x: expected
// one argument".
func FlagError(command string, err error) *UsageError {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: "):
		msg = "unrecognized arguments: '" + strings.TrimPrefix(msg, "unknown flag: ") + "'"
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		if _, arg, ok := strings.Cut(msg, " in "); ok {
			msg = "unrecognized arguments: '" + arg + "'"
		}
	case strings.HasPrefix(msg, "flag needs an argument: "):
		flag := strings.TrimPrefix(msg, "flag needs an argument: ")
		if i := strings.LastIndex(flag, " "); i >= 0 {
			flag = flag[i+1:]
		}
		msg = "argument " + strings.Trim(flag, "'") + ": expected one argument"
	}
	return &UsageError{Command: command, Msg: msg}
}

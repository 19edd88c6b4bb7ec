#!/bin/bash
# cli_subcommands.sh: the subcommand tables of llmio, `trace`, `model` and `results`: each
# subcommand is found by name, gets its own arguments, and a missing or unknown one is a
# usage error naming what exists.  Also the shared option loop (cli_getopt_next) of sweep,
# results export and advise: one wording for an unknown option and a missing value, and
# operands after the options wherever they were given.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# an unknown command is followed by the usage, so more than one line on stderr
llmio nosuch
check "unknown command: exit 2" [ "$RC" -eq 2 ]
expect_err "unknown command named" "unknown command 'nosuch'"
expect_rc 0 "help lists the commands" help
expect_out "help names every command" run engines quick model report advise sweep results \
	trace replay

expect_rc 2 "model without a subcommand" model
expect_err "model asks which" "list or show?"
expect_rc 2 "model: unknown subcommand" model frobnicate
expect_err "model names the unknown one" "unknown subcommand 'frobnicate' (list or show)"
expect_rc 0 "model list reached" model list
expect_rc 2 "model show gets its own arguments" model show
expect_rc 0 "model help" model help

expect_rc 2 "results without a subcommand" results
expect_err "results says what it expects" "llmio results export JOURNAL.jsonl --csv"
expect_rc 2 "results: unknown subcommand" results import x.jsonl
expect_rc 0 "results --help" results --help
expect_rc 2 "results export: no journal" results export --csv
expect_err "results export counts its own arguments" "give one journal file"
printf '{"a":1}\n' >"$T/j.jsonl"
llmio results export "$T/j.jsonl" --csv
check "results export reached" [ "$RC" -eq 0 ]
expect_out "results export: the CSV header" config_hash,section,point
expect_err "results export read the journal" "line 1 is not a point record"

expect_rc 2 "trace dump: one file" trace dump
expect_err "trace dump's own message" "llmio trace dump: give one trace file"
expect_rc 2 "trace report: one file" trace report
expect_err "trace report's own message" "llmio trace report: give one trace file"
expect_rc 2 "trace import-strace: usage" trace import-strace
expect_err "trace import-strace's own message" "llmio trace import-strace LOG -o FILE"
# getopt's own line comes first
llmio trace --nosuch
check "trace: anything else is the traced command's options" [ "$RC" -eq 2 ]
expect_err "trace's own message" "llmio trace: unknown option"
expect_rc 2 "trace without a command" trace
expect_err "trace asks for a command" "no command to trace"

for cmd in sweep advise; do
	expect_rc 2 "$cmd: unknown option" $cmd --frobnicate x.jsonl
	expect_err "$cmd: unknown option named" \
		"llmio $cmd: unknown option '--frobnicate' (see \`llmio $cmd --help\`)"
done
expect_rc 2 "results export: unknown option" results export --frobnicate x.jsonl
expect_err "results export: unknown option named" \
	"llmio results: unknown option '--frobnicate' (see \`llmio results --help\`)"
expect_rc 2 "sweep: missing value" sweep job.ini -o
expect_err "sweep: missing value named" "llmio sweep: -o needs a value"
expect_rc 2 "sweep: --repeat without a value" sweep job.ini --repeat
expect_err "sweep: --repeat named" "llmio sweep: --repeat needs a value"
expect_rc 2 "results export: missing value" results export j.jsonl --csv --output
expect_err "results export: missing value named" "llmio results: --output needs a value"
expect_rc 2 "sweep: two operands" sweep a.ini b.ini --dry-run
expect_err "sweep: one job file" "llmio sweep: give one job file"
# an operand before the options still counts: getopt_long moves it after them
printf '[global]\nrw=read\nbs=4k\nsize=1m\n[p]\n' >"$T/job.ini"
expect_rc 0 "sweep: operand first" sweep "$T/job.ini" --dry-run
expect_rc 0 "sweep: operand last" sweep --dry-run "$T/job.ini"
expect_rc 0 "advise --help" advise --help
expect_out "advise --help is its help" "llmio advise"

# quick, engines, model list / show and replay: their own wording for an unknown option, a
# missing value and an extra argument (pinned before they moved onto cli_getopt_next), and no
# abbreviations: a prefix of an option is an unknown option, never that option
expect_rc 2 "quick: unknown option" quick --frobnicate
expect_err "quick: unknown option named" \
	"llmio: unknown option '--frobnicate' (see \`llmio quick --help\`)"
expect_rc 2 "quick: an abbreviation is unknown" quick --di "$T"
expect_err "quick: abbreviation named" "llmio: unknown option '--di' (see \`llmio quick --help\`)"
expect_rc 2 "quick: missing value" quick --runtime
expect_err "quick: missing value named" "llmio: --runtime needs a value (see \`llmio quick --help\`)"
expect_rc 2 "quick: bad size" quick --size=1k
expect_err "quick: bad size named" "llmio: --size 1k is not valid: expected a size of at least 16m"
expect_rc 2 "quick: an extra argument" quick extra
expect_err "quick: extra argument named" "llmio: unknown option 'extra' (see \`llmio quick --help\`)"
expect_rc 0 "quick --help" quick --help
expect_out "quick --help is its help" "usage: llmio [quick]"

expect_rc 2 "engines: unknown option" engines --frobnicate
expect_err "engines: unknown option named" "llmio engines: unknown option '--frobnicate'"
expect_rc 2 "engines: an abbreviation is unknown" engines --bri
expect_err "engines: abbreviation named" "llmio engines: unknown option '--bri'"
expect_rc 2 "engines: an extra argument" engines extra
expect_err "engines: extra argument named" "llmio engines: unknown option 'extra'"
expect_rc 0 "engines --brief" engines --brief
expect_rc 0 "engines -h" engines -h
expect_out "engines -h is its help" "usage: llmio engines [--brief]"

expect_rc 2 "model list: unknown option" model list --frobnicate
expect_err "model list: unknown option named" \
	"llmio model list: unknown argument '--frobnicate' (see --help)"
expect_rc 2 "model list: an abbreviation is unknown" model list --js
expect_err "model list: abbreviation named" "llmio model list: unknown argument '--js' (see --help)"
expect_rc 2 "model list: an extra argument" model list extra
expect_err "model list: extra named" "llmio model list: unknown argument 'extra' (see --help)"
expect_rc 0 "model list --json" model list --json

expect_rc 2 "model show: unknown option" model show gpt2 --frobnicate
expect_err "model show: unknown option named" \
	"llmio model show: unknown option '--frobnicate' (see llmio model show --help)"
expect_rc 2 "model show: missing value" model show gpt2 --tp
expect_err "model show: missing value named" \
	"llmio model show: missing value for '--tp' (see llmio model show --help)"
expect_rc 2 "model show: an abbreviation is unknown" model show gpt2 --tens
expect_err "model show: abbreviation named" \
	"llmio model show: unknown option '--tens' (see llmio model show --help)"
expect_rc 2 "model show: two models" model show gpt2 opt-350m
expect_err "model show: one at a time" "llmio model show: one model at a time ('opt-350m' is extra)"
expect_rc 0 "model show: options before the model" model show --tp 2 gpt2 --tensors

expect_rc 2 "replay: no trace" replay
expect_err "replay: asks for the trace" "llmio replay: give a trace file: llmio replay TRACE --dir DIR"
expect_rc 2 "replay: an option first" replay --dir "$T"
expect_err "replay: the trace comes first" "llmio replay: the first argument is the trace file, not --dir"
expect_rc 0 "replay: --help after the trace" replay t.trace --dir "$T" --help
expect_out "replay --help is its help" "usage: llmio replay TRACE --dir DIR"
expect_rc 2 "replay: an abbreviation is passed on, not taken for --dir" replay t.trace --di "$T"
expect_err "replay: the abbreviation is unknown to run" "llmio: --di is not a parameter of workload replay"
expect_rc 2 "replay: --dir without its value" replay t.trace --dir
expect_err "replay: --dir needs a value" "llmio replay: --dir needs a value"
# the shared helper refuses prefixes for every command that uses it
expect_rc 2 "sweep: an abbreviation is unknown" sweep "$T/job.ini" --dry
expect_err "sweep: abbreviation named" "llmio sweep: unknown option '--dry' (see \`llmio sweep --help\`)"
expect_rc 2 "sweep: an abbreviation with its value is unknown" sweep "$T/job.ini" --out "$T/o"
expect_err "sweep: abbreviation with value named" "llmio sweep: unknown option '--out'"

finish

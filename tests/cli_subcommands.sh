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

finish

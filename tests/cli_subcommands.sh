#!/bin/bash
# cli_subcommands.sh: the subcommand tables of llmio, `trace`, `model` and `results`: each
# subcommand is found by name, gets its own arguments, and a missing or unknown one is a
# usage error naming what exists.

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

finish

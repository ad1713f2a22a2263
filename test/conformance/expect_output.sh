#!/bin/sh
# Runs a command and checks how it ended: expect_output.sh STATUS TEXT COMMAND [ARG...]
#   STATUS  "pass" (exit 0), "skips" (exit 3: passed with skipped checks) or "fail" (exit 1: a check failed, not a
#           crash or a usage error)
#   TEXT    a fixed string the output must contain, such as a rule tag "[idempotent-launch]"
# and Check's summary line must report no errors (a crash is never the expected failure).
# The command's output is shown either way, so a meson test log explains itself.
set -u
want_status=$1
want_text=$2
shift 2
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
case $want_status in
pass) expected=0 ;;
skips) expected=3 ;;
fail) expected=1 ;;
*) echo "expect_output.sh: STATUS must be pass, skips or fail, not $want_status" >&2; exit 2 ;;
esac
if [ "$status" -ne "$expected" ]; then
    echo "expect_output.sh: expected exit status $expected ($want_status), got $status" >&2
    exit 1
fi
if ! printf '%s\n' "$out" | grep -qF -- "$want_text"; then
    echo "expect_output.sh: the output does not contain \"$want_text\"" >&2
    exit 1
fi
# A check that crashed (Check counts it as an error) must not pass for the rule it happened to be near.
if ! printf '%s\n' "$out" | grep -qE -- 'Checks: [0-9]+, Failures: [0-9]+, Errors: 0$'; then
    echo "expect_output.sh: Check's summary line is missing or reports errors (crashes or timeouts)" >&2
    exit 1
fi
echo "expect_output.sh: exit status $status and \"$want_text\" found, as expected"

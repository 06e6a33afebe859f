#!/usr/bin/env bash
# The run step of the conformance action (action.yml), also run by the harness's tests
# (harness/cli/tests/ci_pipeline.rs) with a fake $GITHUB_STEP_SUMMARY.
#
# Runs `conformance run` against $CONFORMANCE_ACTION_TARGET (the built-in runtime when empty)
# with the extra arguments $CONFORMANCE_ACTION_ARGS, writes the reports to
# $CONFORMANCE_ACTION_REPORT_DIR, appends the Markdown summary to $GITHUB_STEP_SUMMARY and
# records the exit code as the step output `exit-code` ($GITHUB_OUTPUT). The step itself
# succeeds whatever the verdict, so that the upload step runs; the action's last step fails the
# job with that exit code. $CONFORMANCE_BIN names the binary (default `conformance` on PATH).
set -uo pipefail

bin="${CONFORMANCE_BIN:-conformance}"
dir="${CONFORMANCE_ACTION_REPORT_DIR:-conformance-report}"
args=(run --quiet --report-dir "$dir")
if [ -n "${CONFORMANCE_ACTION_TARGET:-}" ]; then
    args+=(--target "$CONFORMANCE_ACTION_TARGET")
fi
# Extra arguments, split on whitespace (secrets belong in the environment, not here).
read -r -a extra <<< "${CONFORMANCE_ACTION_ARGS:-}"

"$bin" "${args[@]}" "${extra[@]}"
code=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -f "$dir/summary.md" ]; then
        cat "$dir/summary.md" >> "$GITHUB_STEP_SUMMARY"
    else
        printf 'conformance wrote no report (exit code %s): see the step log\n' "$code" >> "$GITHUB_STEP_SUMMARY"
    fi
    if [ -f "$dir/claim-summary.md" ]; then
        cat "$dir/claim-summary.md" >> "$GITHUB_STEP_SUMMARY"
    fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "exit-code=$code" >> "$GITHUB_OUTPUT"
fi
echo "conformance exited with $code" >&2
exit 0

#!/usr/bin/env bash
# CodeGrade's Capture Points step: grades the student's submission with
# referee; the grading report goes to stderr, and the score from 0 to 1 is
# the only line on stdout, for the step's default regex
# (graders/codegrade/README.md).
#
# Settings (environment, all optional):
#   REFEREE     the referee binary (default: $FIXTURES/referee)
#   RUBRIC      the rubric (default: $FIXTURES/notakto-assignment.toml)
#   GRADE       the game and its options (default: the Notakto assignment,
#               "notakto --boards 3 --seat 1 --time-ms 1000")
#   GAMES       games per seat (default: referee's)
#   SUBMISSION  the student's folder (default: the current folder)
#   SANDBOX     referee's sandbox: best-effort (the default), on, or off
set -u
FIXTURES="${FIXTURES:-$(cd "$(dirname "$0")" && pwd)}"
REFEREE="${REFEREE:-$FIXTURES/referee}"
RUBRIC="${RUBRIC:-$FIXTURES/notakto-assignment.toml}"
GRADE="${GRADE:-notakto --boards 3 --seat 1 --time-ms 1000}"
GAMES="${GAMES:-}"
SUBMISSION="${SUBMISSION:-.}"
SANDBOX="${SANDBOX:-best-effort}"

case "$SANDBOX" in
    off) sandbox_flag=--no-sandbox ;;
    *) sandbox_flag="--sandbox=$SANDBOX" ;;
esac

OUT="$(mktemp -d "${TMPDIR:-/tmp}/referee-codegrade.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
# shellcheck disable=SC2086 # GRADE is words on purpose
"$REFEREE" grade $GRADE ${GAMES:+--games "$GAMES"} "$sandbox_flag" \
    --rubric "$RUBRIC" --codegrade "$SUBMISSION" >"$OUT/stdout" 2>"$OUT/stderr"
status=$?
# The report (all but the last line) and referee's progress and errors.
cat "$OUT/stderr" >&2
sed '$d' "$OUT/stdout" >&2
score="$(tail -n 1 "$OUT/stdout")"
case "$score" in
    [01] | 0.[0-9]*) echo "$score" ;;
    *)
        echo "The autograder failed (referee exit status $status); please tell the course staff." >&2
        echo 0
        ;;
esac
exit 0

#!/usr/bin/env bash
# Autolab's autograder: grades the submission folder $1 with referee and
# prints the grading report, then Autolab's autoresult as the last line
# (graders/autolab/README.md).
#
# Settings (environment, all optional):
#   REFEREE  the referee binary (default: referee beside this script)
#   RUBRIC   the rubric (default: rubrics/notakto-assignment.toml beside it)
#   GRADE    the game and its options (default: the Notakto assignment,
#            "notakto --boards 3 --seat 1 --time-ms 1000")
#   GAMES    games per seat (default: referee's)
#   SANDBOX  referee's sandbox: best-effort (the default), on, or off
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
REFEREE="${REFEREE:-$HERE/referee}"
RUBRIC="${RUBRIC:-$HERE/rubrics/notakto-assignment.toml}"
GRADE="${GRADE:-notakto --boards 3 --seat 1 --time-ms 1000}"
GAMES="${GAMES:-}"
SANDBOX="${SANDBOX:-best-effort}"
SUBMISSION="${1:-submission}"

case "$SANDBOX" in
    off) sandbox_flag=--no-sandbox ;;
    *) sandbox_flag="--sandbox=$SANDBOX" ;;
esac
chmod -R a+rX "$SUBMISSION" 2>/dev/null

OUT="$(mktemp -d "${TMPDIR:-/tmp}/referee-autolab.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
# shellcheck disable=SC2086 # GRADE is words on purpose
"$REFEREE" grade $GRADE ${GAMES:+--games "$GAMES"} "$sandbox_flag" \
    --rubric "$RUBRIC" --autolab "$SUBMISSION" >"$OUT/stdout" 2>"$OUT/stderr"
status=$?
# Progress and errors first, so that the autoresult stays the last line.
cat "$OUT/stderr"
cat "$OUT/stdout"
if ! tail -n 1 "$OUT/stdout" | grep -q '^{.*"scores":'; then
    echo "The autograder failed (referee exit status $status); please tell the course staff."
    echo '{"scores": {}}'
fi
exit 0

#!/usr/bin/env bash
# PrairieLearn's external grader entry point: grades the submission in
# $ROOT/student with referee and writes $ROOT/results/results.json
# (graders/prairielearn/README.md). PrairieLearn runs it in the question's
# grading container, with the course's serverFilesCourse/referee/ folder
# (this script, the referee binary, rubrics/) in $ROOT/serverFilesCourse.
#
# Settings (environment, all optional):
#   GRADE_ROOT  the grading tree (default /grade)
#   REFEREE     the referee binary (default $ROOT/serverFilesCourse/referee/referee)
#   RUBRIC      the rubric (default $ROOT/serverFilesCourse/referee/rubrics/notakto-assignment.toml)
#   GRADE       the game and its options (default: the Notakto assignment,
#               "notakto --boards 3 --seat 1 --time-ms 1000")
#   GAMES       games per seat (default: referee's)
#   SANDBOX     referee's sandbox: best-effort (the default), on, or off
set -u
ROOT="${GRADE_ROOT:-/grade}"
REFEREE="${REFEREE:-$ROOT/serverFilesCourse/referee/referee}"
RUBRIC="${RUBRIC:-$ROOT/serverFilesCourse/referee/rubrics/notakto-assignment.toml}"
GRADE="${GRADE:-notakto --boards 3 --seat 1 --time-ms 1000}"
GAMES="${GAMES:-}"
SANDBOX="${SANDBOX:-best-effort}"
RESULTS="$ROOT/results"
mkdir -p "$RESULTS"

case "$SANDBOX" in
    off) sandbox_flag=--no-sandbox ;;
    *) sandbox_flag="--sandbox=$SANDBOX" ;;
esac
# The sandboxed bot runs as an unprivileged user: it may read its own files.
chmod -R a+rX "$ROOT/student" 2>/dev/null

# Written where the bot cannot reach, moved into place once referee (and
# every process of the submission) is gone.
PRIVATE="$(mktemp -d "${TMPDIR:-/tmp}/referee-results.XXXXXX")"
trap 'rm -rf "$PRIVATE"' EXIT

# shellcheck disable=SC2086 # GRADE is words on purpose
"$REFEREE" grade $GRADE ${GAMES:+--games "$GAMES"} "$sandbox_flag" \
    --rubric "$RUBRIC" \
    --prairielearn "$PRIVATE/results.json" \
    "$ROOT/student" >"$PRIVATE/referee.txt" 2>&1
status=$?
cat "$PRIVATE/referee.txt"

# 0 pass, 1 fail: results.json has the score. 2: not graded, and
# results.json says why (gradable: false). Anything else (referee missing or
# killed): say so rather than leave no result.
if [ ! -s "$PRIVATE/results.json" ]; then
    printf '{"gradable": false, "score": 0, "message": "The autograder failed (referee exit status %s); please tell the course staff."}\n' \
        "$status" >"$PRIVATE/results.json"
fi
chmod 644 "$PRIVATE/results.json"
mv -f "$PRIVATE/results.json" "$RESULTS/results.json"
exit 0

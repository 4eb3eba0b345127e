#!/bin/bash
# Submits a sharded referee run and its merge in one go:
#
#   contrib/slurm/submit.sh N OUT COMMAND [ARGS...]
#
# e.g. contrib/slurm/submit.sh 8 results/week3 tournament tournaments/uttt.toml --seed 7
# Extra sbatch options (a partition, an account, a time limit) go in
# SBATCH_ARGS, e.g. SBATCH_ARGS="--partition=short --time=02:00:00".
# Prints the two job ids: the array job's, then the merge job's. With
# SUBMIT_WAIT=1 it then waits for the merge (sbatch --wait) and exits with its
# status: non-zero when a shard failed and the merge was cancelled.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 N OUT COMMAND [ARGS...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
shards=$1 out=$2
mkdir -p "$out/logs"
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array="1-$shards" \
  --output="$out/logs/shard-%a.out" "$here/shard.sbatch" "$@")
array=${array%%;*}
merge_args=(--dependency="afterok:$array" --kill-on-invalid-dep=yes
  --output="$out/logs/merge.out" "$here/merge.sbatch" "$out")
if [ "${SUBMIT_WAIT:-0}" = 1 ]; then
  echo "$array"
  # shellcheck disable=SC2086
  merge=$(sbatch --parsable --wait ${SBATCH_ARGS:-} "${merge_args[@]}")
  merge=${merge%%;*}
  echo "merge job $merge"
  # sbatch --wait exits 0 for a job cancelled before it ran: ask its state.
  state=$(scontrol show job "$merge" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  echo "merge job $merge: $state"
  [ "$state" = COMPLETED ]
  exit
fi
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} "${merge_args[@]}")
echo "$array ${merge%%;*}"

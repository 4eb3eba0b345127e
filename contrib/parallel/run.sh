#!/bin/bash
# Runs the N shards of a long referee run on several machines with GNU
# parallel, brings each shard's folder back, and merges them here:
#
#   HOSTS=alice@node1,node2 contrib/parallel/run.sh N OUT COMMAND [ARGS...]
#
# e.g. HOSTS=node1,node2 TRANSFER="tournaments/uttt.toml openings/uttt-2ply.txt" \
#        contrib/parallel/run.sh 8 results/uttt tournament tournaments/uttt.toml --seed 7
#
# - HOSTS: GNU parallel's --sshlogin list (`:` is this machine). Each host
#   needs referee on its PATH (or REFEREE set to its path there) and, like
#   this machine, rsync: parallel moves files with it.
# - TRANSFER: the files the command reads (the tournament file, its opening
#   suite, the bots' programs and manifests), sent to every host once with
#   --basefile, at the same relative paths. (parallel's --transferfile sends
#   each job's own input file; here every job reads the same files.)
# - Each shard runs in its own work folder on its host (--workdir ...), its
#   folder OUT/shard-K comes back with --return, and --cleanup removes what
#   was sent. A shard that fails is run again with the same command: shards
#   whose folders are complete are skipped by `--resume` at once.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: HOSTS=host1,host2 $0 N OUT COMMAND [ARGS...]" >&2
  exit 2
fi
command -v parallel >/dev/null || { echo "GNU parallel is not installed" >&2; exit 2; }
shards=$1 out=$2
shift 2
remote=()
if [ "${HOSTS:-:}" != : ]; then
  remote=(--workdir ... --cleanup --return "$out/shard-{}")
  for f in ${TRANSFER:-}; do remote+=(--basefile "$f"); done
fi
mkdir -p "$out"
referee=${REFEREE:-referee}
status=0
seq 1 "$shards" | parallel --halt never --jobs 1 -S "${HOSTS:-:}" "${remote[@]}" \
  "$referee" "$@" --shard "{}/$shards" --out "$out/shard-{}" --resume || status=$?
if [ "$status" != 0 ]; then
  echo "$status shard(s) failed: run the same command again to finish them" >&2
  exit 1
fi
"${MERGE_REFEREE:-referee}" merge "$out"/shard-* --out "$out/merged"

#!/bin/sh
# Slurm epilog: appends the finished job's trainvitals summary to its output
# file, as jobstats users expect at the end of a job: its GPU-hours held and
# busy, its peak memory, its findings with their advice and its cost. The
# summary comes from the run history of `trainvitals serve --spool` on the
# node, which indexes the job a few seconds after it ends (docs/cluster.md).
#
# slurm.conf:  Epilog=/etc/slurm/epilog.d/trainvitals.sh
#
# It never fails: an epilog that exits non-zero drains the node. The job stays
# COMPLETING while it waits for the summary (at most TRAINVITALS_WAIT seconds).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TRAINVITALS=${TRAINVITALS:-trainvitals}
DB=${TRAINVITALS_DB:-/var/lib/trainvitals/runs.db}
WAIT=${TRAINVITALS_WAIT:-20}

[ -n "$SLURM_JOB_ID" ] && [ -n "$SLURM_JOB_UID" ] || exit 0
# The output file as the job's submission named it, its patterns (%j) filled.
out=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *StdOut=//p' | head -n 1)
case $out in /*) ;; *) exit 0 ;; esac
note=$("$TRAINVITALS" runs show --db "$DB" --job "$SLURM_JOB_ID" --wait "$WAIT" 2>/dev/null) ||
  exit 0
# Appended as the job's owner, never as root: the file is the owner's, and a
# link put in its place leads nowhere the owner could not write anyway.
printf '\n%s\n' "$note" |
  setpriv --reuid="$SLURM_JOB_UID" --regid="${SLURM_JOB_GID:-$SLURM_JOB_UID}" --clear-groups \
    sh -c 'cat >> "$1"' sh "$out" 2>/dev/null
exit 0

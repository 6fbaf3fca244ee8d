#!/usr/bin/env bash
# Stop the daemons that slurm_up.sh started, and nothing else.
#
# slurm_up.sh records, in /run/aimrepro-slurm/, the PID file of each daemon it
# started; this script stops exactly those processes, by PID (checking that
# the PID still belongs to that daemon), never by process name.  A munged that
# was already running before slurm_up.sh is left alone.  Safe to run any
# number of times, and when nothing runs.  Exits 1 only if a daemon survived
# SIGKILL (its record is then kept).
set -u

STATE=/run/aimrepro-slurm

# pid_of NAME: the PID of daemon NAME as slurm_up.sh recorded it, if that
# process is still that daemon (a stale PID file's PID may have been reused).
pid_of() {
    local pidfile pid
    [ -s "$STATE/$1" ] || return 0
    pidfile=$(cat "$STATE/$1")
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ] && echo "$pid"
    return 0
}

# gone PID: wait up to 10 s for PID to exit; true if it did.
gone() {
    for _ in $(seq 40); do
        [ -d "/proc/$1" ] || return 0
        sleep 0.25
    done
    return 1
}

survivors=0
declare -A pids=()
for name in slurmd slurmctld munged; do
    pid=$(pid_of "$name")
    [ -n "$pid" ] && pids[$name]=$pid
done

if [ -n "${pids[slurmctld]:-}" ] && command -v scontrol >/dev/null; then
    # Cancel the jobs left on this throwaway cluster (say, of a killed test):
    # a running job's slurmstepd would outlive slurmd.
    jobs=$(timeout 10 squeue -h -t PD,R,CG,S -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
        echo "slurm_down.sh: cancelling jobs $(echo $jobs)" >&2
        # shellcheck disable=SC2086  # one argument per job id
        timeout 10 scancel $jobs 2>/dev/null || true
        for _ in $(seq 40); do
            [ -z "$(timeout 10 squeue -h -t R,CG -o %A 2>/dev/null)" ] && break
            sleep 0.25
        done
    fi
    # A clean shutdown: slurmctld tells slurmd to exit too.
    timeout 10 scontrol shutdown >/dev/null 2>&1 || true
fi
for name in slurmd slurmctld munged; do
    pid=${pids[$name]:-}
    if [ -n "$pid" ]; then
        # slurmd/slurmctld are normally already exiting after `scontrol shutdown`.
        [ "$name" = munged ] || gone "$pid" || true
        [ -d "/proc/$pid" ] && kill "$pid" 2>/dev/null
        if ! gone "$pid"; then
            echo "slurm_down.sh: $name (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL" >&2
            kill -9 "$pid" 2>/dev/null
            if ! gone "$pid"; then
                echo "slurm_down.sh: $name (pid $pid) is still running" >&2
                survivors=1
                continue    # keep its record: it is not gone
            fi
        fi
    fi
    rm -f "$STATE/$name"
done
exit "$survivors"

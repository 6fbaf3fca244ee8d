#!/usr/bin/env bash
# Bring up a throwaway one-node Slurm on 127.0.0.1, for tests/cluster/.
#
# Debian 12 (bookworm) as root, tested without systemd (apt starts no daemons
# there): installs Debian's slurmctld, slurmd, slurm-client and munge if
# missing, writes /etc/slurm/slurm.conf, starts munged, slurmctld and slurmd,
# and waits until the node is idle.  No accounting database: clients must pass
# `--slurm-status-command squeue` to Snakemake (docs/slurm.md, "Status checks: sacct or squeue").
# What it sets up and why: docs/slurm.md, "The cluster tests".
#
# Idempotent: a cluster this script started before is stopped first and comes
# back with empty controller state (no old jobs, job ids from 1).  It refuses
# to touch a Slurm it did not configure itself (a slurm.conf without its
# marker line).  On failure it stops whatever it started.  Stop with
# slurm_down.sh (by PID file; never by process name).
#
# Exit status: 0 up and idle; 3 this machine cannot host it (the reason is the
# last line on stderr, for the test to report as a skip); anything else is a
# failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MARKER="# Written by aimrepro tests/cluster/slurm_up.sh: a throwaway one-node test cluster."
CONF=/etc/slurm/slurm.conf
STATE=/run/aimrepro-slurm          # what this script started (read by slurm_down.sh)
PACKAGES=(slurmctld slurmd slurm-client munge)

cannot() { echo "slurm_up.sh: $*" >&2; exit 3; }

[ "$(id -u)" -eq 0 ] || cannot "needs root (it installs packages and starts slurmctld/slurmd), running as uid $(id -u)"
command -v dpkg >/dev/null && command -v apt-get >/dev/null \
    || cannot "needs Debian's apt-get and dpkg to install ${PACKAGES[*]}"
if [ -e "$CONF" ] && ! grep -qxF "$MARKER" "$CONF"; then
    cannot "$CONF exists and was not written by this script; refusing to replace a real Slurm configuration"
fi

# A cluster left by an earlier run: stop it, so that it restarts with fresh state.
bash "$here/slurm_down.sh"

started_ok=0
trap '[ "$started_ok" -eq 1 ] || bash "$here/slurm_down.sh"' EXIT

if ! dpkg -s "${PACKAGES[@]}" >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Wait for a concurrent apt/dpkg instead of failing on its lock.
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 \
        "${PACKAGES[@]}" >/dev/null
fi

install -d -m 0755 "$STATE" /run/slurm /var/log/slurm /var/lib/slurm/slurmd

# munge authenticates every Slurm RPC.  The package's postinst creates the key;
# the daemon must run as user munge (no systemd here to do that).
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
if ! { munge -n | unmunge; } >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1   # forks
    echo /run/munge/munged.pid >"$STATE/munged"   # ours to stop; a system munged is not
fi
{ munge -n | unmunge; } >/dev/null

# Fresh controller state: slurmctld would otherwise reload old jobs and ids.
rm -rf /var/lib/slurm/slurmctld && install -d -m 0755 /var/lib/slurm/slurmctld

# RealMemory above what slurmd detects puts the node in state INVAL.
real_memory=$(( $(free -m | awk '/^Mem:/{print $2}') - 512 ))
cat >"$CONF" <<CONF
$MARKER
# Regenerated on every start; see the script for why each line is here.
ClusterName=aimrepro-ci
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
# No PMIx/MPI, no mail, no cgroups: nothing a single-process Python job needs.
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Cores and memory are consumable, so jobs run side by side within their requests.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# A job that requests no memory would otherwise get the whole node.
DefMemPerCPU=256
SchedulerType=sched/backfill
ReturnToService=2
# Finished jobs stay visible to squeue/scontrol this long (seconds).  Snakemake's
# squeue status mode needs MinJobAge >= 3 x its first status-check delay.
MinJobAge=300
# No accounting database: sacct does not work here (hence the squeue status mode).
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$real_memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

# Both daemons fork and write their PID files; -N names the node explicitly
# (the host name is not "localhost").
echo /run/slurm/slurmd.pid >"$STATE/slurmd"
echo /run/slurm/slurmctld.pid >"$STATE/slurmctld"
slurmctld </dev/null >/dev/null 2>&1
slurmd -N localhost </dev/null >/dev/null 2>&1
for _ in $(seq 120); do
    [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ] && break
    sleep 0.25
done
if [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" != idle ]; then
    echo "slurm_up.sh: node localhost did not become idle:" >&2
    sinfo -N -l >&2 || true
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1
fi
sinfo
started_ok=1

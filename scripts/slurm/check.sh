#!/usr/bin/env bash
# Runs scripts/slurm/gipf.sbatch on a real Slurm: a one-node cluster on this
# machine (Debian's slurm-wlm, installed and started when none answers; needs
# root), a job array of one trainer and two self-play tasks of two workers
# each on the tiny config and a local run folder; checks that the trainer
# reached its steps and every worker's games are there. About a minute after the build.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v sbatch >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm >/dev/null
fi
if ! sinfo >/dev/null 2>&1; then
    host="$(hostname -s)"
    mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
    chown munge:munge /run/munge
    if [ ! -f /etc/slurm/slurm.conf ]; then
        cat >/etc/slurm/slurm.conf <<CONF
ClusterName=gipf-local
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmUser=root
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
    fi
    runuser -u munge -- /usr/sbin/munged
    slurmctld
    slurmd
    for _ in $(seq 30); do sinfo >/dev/null 2>&1 && break; sleep 1; done
fi
scripts/setup-torch.sh
cargo build --release --workspace --locked
work="$(mktemp -d)"
logs="$work/logs" && mkdir -p "$logs"
run="$work/run"
RUN="$run"
if [ "${1:-}" = "--s3" ]; then
    weed="$(scripts/setup-s3.sh)"
    mkdir -p "$work/weed"
    echo '{"identities": [{"name": "check", "credentials": [{"accessKey": "check", "secretKey": "check-secret"}], "actions": ["Admin", "Read", "Write", "List"]}]}' >"$work/s3.json"
    "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$work/weed" -master.port=29433 -volume.port=28180 \
        -filer.port=28988 -s3 -s3.port=28433 -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$work/s3.json" \
        -master.telemetry=false -volume.max=50 -master.volumeSizeLimitMB=64 >"$work/weed.log" 2>&1 &
    trap 'kill %1 2>/dev/null || true' EXIT
    for _ in $(seq 60); do
        echo "s3.bucket.create -name check" | "$weed" shell -master=127.0.0.1:29433 2>/dev/null | grep -q "created bucket" && break
        sleep 1
    done
    until (exec 3<>/dev/tcp/127.0.0.1/28433) 2>/dev/null; do sleep 1; done
    export AWS_ACCESS_KEY_ID=check AWS_SECRET_ACCESS_KEY=check-secret AWS_ENDPOINT_URL=http://127.0.0.1:28433
    export GIPF_CACHE="$work/cache"
    RUN=s3://check/run
    # The trainer's local copy of the run.
    run="$GIPF_CACHE/runs/s3___check_run/run"
fi
RUN="$RUN" CONFIG=configs/tiny.toml DEVICE=cpu STEPS=20 GAMES=6 BIN="$PWD/target/release" \
    timeout 600 sbatch --wait --cpus-per-task=1 --array=0-2 --output="$logs/gipf-%a.log" scripts/slurm/gipf.sbatch
ls "$run/models" | grep -q '^step-00000020.safetensors$' || { echo "no step 20: $(ls "$run/models")"; cat "$logs"/*; exit 1; }
games=$(for f in "$run"/games/shard-*; do zstd -dc "$f"; done | wc -l)
workers=$(ls "$run/games" | sed -E 's/^shard-[0-9]+-(.*)-[0-9]+\.jsonl\.zst$/\1/' | sort -u | wc -l)
kind=folder && [ "${RUN#s3://}" != "$RUN" ] && kind=s3
echo "slurm ($kind run): trainer reached step 20; $games games from $workers workers"
[ "$games" = 12 ] && [ "$workers" = 4 ]

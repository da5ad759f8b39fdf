#!/usr/bin/env bash
# Tier: the scale-out recipes of Documentation/Scaling.md run under their scheduler.
#  Slurm: a one-node cluster on this machine (Debian's slurm-wlm and munge: munged, slurmctld and
#  slurmd on 127.0.0.1 with a generated slurm.conf, munge key and sockets in a temporary folder, all
#  stopped on exit). The job array script is taken from the page unchanged and submitted with
#  `sbatch --wait` over a generated corpus:
#   1. merged manifest and outputs equal one unsharded run byte for byte; each input converted once;
#   2. task 2 cancelled: `granite manifest merge` reports the missing shard (exit 2), and succeeds
#      after `sbatch --array=2` re-runs it;
#   3. a task cancelled in the middle of its shard and requeued (`scontrol requeue`) finishes without
#      converting again what it had finished, and leaves no temporaries.
#  Kubernetes: the Indexed Job on the page validated by kubernetes-validate (strict, a pinned
#  Kubernetes version; a broken copy must fail), and its container command run once per index with
#  JOB_COMPLETION_INDEX set as Kubernetes sets it, merged and compared with the unsharded run.
# Prints the wall time of the 4-task array against the unsharded run, and the scheduler's overhead
# per task (submit to start, end to sbatch --wait's return) measured on an array of empty tasks.
# Uses the debug `granite` that ./scripts/test builds (built here when missing).
. "$(dirname "$0")/../lib.sh"
ensure_apt slurm-wlm munge
KUBERNETES_VERSION=1.33.0
ensure_venv kubernetes-validate==1.37.0
cd "$ROOT"
granite="$ROOT/.build/debug/granite"
[ -x "$granite" ] || swift build --product granite >&2
doc="$ROOT/Documentation/Scaling.md"
work="$(mktemp -d /tmp/granite-slurm.XXXXXX)"
chmod 700 "$work"
pids=()
stop_cluster() {
  if [ -n "${SLURM_CONF:-}" ] && [ -e "$SLURM_CONF" ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 40); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.25; done
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -s "$work/munge/munged.pid" ] && kill "$(cat "$work/munge/munged.pid")" 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
now() { date +%s.%N; }
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$@"; }

# The fenced block of the page whose first line is $1 (exactly one such block).
doc_block() {
  python3 - "$doc" "$1" <<'PY'
import sys
lines, first = open(sys.argv[1]).read().split("\n"), sys.argv[2]
blocks, block = [], None
for line in lines:
    if block is None and line.startswith("```"):
        block = []
    elif block is not None and line == "```":
        blocks.append(block); block = None
    elif block is not None:
        block.append(line)
found = [b for b in blocks if b and b[0] == first]
if len(found) != 1:
    sys.exit(f"{sys.argv[1]}: {len(found)} fenced blocks start with {first!r}, expected one")
print("\n".join(found[0]))
PY
}
doc_block '#!/bin/bash' >"$work/convert.sbatch"
doc_block 'apiVersion: batch/v1' >"$work/job.yaml"
shards=$(sed -nE 's/.*--shard auto\/([0-9]+).*/\1/p' "$work/convert.sbatch")
array=$(sed -nE 's/^#SBATCH --array=([0-9-]+).*/\1/p' "$work/convert.sbatch")
check "the page's job array script: shard auto/$shards over --array=$array" "[ '$array' = '0-$((shards - 1))' ]"

# --- the corpus (two folders deep, JPEGs of a few sizes) and the unsharded reference run ---
corpus="$work/photos"
python3 - "$corpus" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(48):
    folder = os.path.join(root, ("trip-a", "trip-b", "trip-b/day-2")[i % 3])
    os.makedirs(folder, exist_ok=True)
    w, h = 1600 + 32 * (i % 5), 1200 + 24 * (i % 4)
    row = bytes((x * (i + 3) + 40 * i) % 256 for x in range(w * 3))
    px = b"".join(row[(y * 7 + i) % 96 * 3:] + row[:(y * 7 + i) % 96 * 3] for y in range(h))
    open(os.path.join(folder, f"img-{i:03d}.ppm"), "wb").write(b"P6 %d %d 255\n" % (w, h) + px)
PY
convert=/usr/bin/convert; [ -x $convert ] || convert=convert
find "$corpus" -name '*.ppm' | while read -r f; do "$convert" "$f" -quality 90 "${f%.ppm}.jpg" && rm "$f"; done
inputs=$(find "$corpus" -type f | wc -l)
reference="$work/reference"
started=$(now)
"$granite" convert "$corpus" -o "$reference" --resize 50% >"$work/reference.log" 2>&1
unsharded_s=$(seconds "$started" "$(now)")
echo "slurm: unsharded run: $inputs inputs in $unsharded_s s ($(tail -1 "$work/reference.log"))"
# Same outputs and manifest as the reference; the shards' parts are extra files, journals must be gone.
same_as_reference() {
  diff -r -x 'manifest.shard-*' "$reference" "$1" >"$work/diff.log" 2>&1 \
    && ! ls "$1" | grep '\.journal$' >/dev/null && ! find "$1" -name '.*.tmp-*' | grep . >/dev/null
}

# --- the cluster ---
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/jobs"
chmod 700 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
# --force: the key and socket live under /tmp, which munged would otherwise refuse.
/usr/sbin/munged --force --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed"
node=$(hostname -s)
cat >"$work/slurm.conf" <<CONF
ClusterName=granite-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
# munged above, not the system's; a requeued job may start again after 5 s instead of 120.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket,cred_expire=5
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
# No cgroups, no accounting database: nothing outside this folder is touched.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=2
# 4 tasks of --cpus-per-task=8 fit at once on this node whatever its real core count.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=32 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 & pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 & pids+=($!)
for _ in $(seq 100); do [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.2; done
if [ "$(sinfo -h -o %T 2>/dev/null)" != idle ]; then
  echo "slurm: the one-node cluster did not come up" >&2
  tail -5 "$work/slurmctld.log" "$work/slurmd.log" "$work/munge/munged.log" >&2 || true
  exit 1
fi
echo "slurm: one-node cluster up ($(sinfo -h -o '%P %D %T %c CPUs'), $(sinfo --version))"
export PATH="$(dirname "$granite"):$PATH"
cd "$work/jobs"
task_state() { scontrol show job "$1" 2>/dev/null | sed -nE 's/.*JobState=([A-Z_]+).*/\1/p' | head -1; }

# 1. The whole array.
out1="$work/run1"
started=$(now)
rc=0; PHOTOS="$corpus" CONVERTED="$out1" sbatch --wait --parsable "$work/convert.sbatch" >"$work/job1" 2>"$work/sbatch1.err" || rc=$?
array_s=$(seconds "$started" "$(now)")
job1=$(cat "$work/job1")
# The last task's summary line is the last write to its log: submit to that is the array's span.
span_s=$(seconds "$started" "$(python3 -c 'import os, sys; print(max(os.stat(f).st_mtime for f in sys.argv[1:]))' granite-convert-${job1}_*.log)")
check "sbatch --wait of the array exits 0" "[ $rc -eq 0 ]"
check "one log per task, each ending in its summary" "[ \$(grep -lE '^shard [0-9]+/$shards: converted [0-9]+, skipped 0, failed 0' granite-convert-${job1}_*.log | wc -l) -eq $shards ]"
converted=$(cat granite-convert-${job1}_*.log | sed -nE 's/^shard [0-9]+\/[0-9]+: converted ([0-9]+), .*/\1/p' | paste -sd+ | bc)
check "no input converted twice: the tasks converted $converted of $inputs" "[ '$converted' = $inputs ]"
rc=0; granite manifest merge "$out1" >"$work/merge1.log" 2>&1 || rc=$?
check "granite manifest merge exits 0" "[ $rc -eq 0 ]"
check "merged manifest and outputs equal the unsharded run byte for byte" "same_as_reference '$out1'"
echo "slurm: $shards-task array: submit to the last task's end $span_s s, sbatch --wait returned after $array_s s (it polls at growing intervals); the unsharded run $unsharded_s s"

# 2. Task 2 cancelled before it ran: the merge names it; `sbatch --array=2` re-runs it.
out2="$work/run2"
job2=$(PHOTOS="$corpus" CONVERTED="$out2" sbatch --parsable --hold "$work/convert.sbatch")
scancel "${job2}_2"
scontrol release "$job2"
for _ in $(seq 600); do [ -z "$(squeue -h -j "$job2")" ] && break; sleep 0.2; done
rc=0; granite manifest merge "$out2" >"$work/merge2.log" 2>&1 || rc=$?
check "task 2 cancelled: merge exits 2 and reports 'missing: shard 2 of $shards'" "[ $rc -eq 2 ] && grep -q 'missing: shard 2 of $shards' '$work/merge2.log' && [ ! -e '$out2/manifest.json' ]"
[ $rc -eq 2 ] || cat "$work/merge2.log"
rc=0; PHOTOS="$corpus" CONVERTED="$out2" sbatch --wait --array=2 "$work/convert.sbatch" >/dev/null || rc=$?
rc2=0; granite manifest merge "$out2" >"$work/merge2b.log" 2>&1 || rc2=$?
check "after sbatch --array=2 the merge exits 0 and equals the unsharded run" "[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && same_as_reference '$out2'"

# 3. One task cancelled in the middle of its shard, then requeued. Its own corpus of 30 inputs, all
#    named into shard 1, and one worker (--cpus-per-task=1 overrides the script's line, so --jobs 1)
#    leave time to cancel it in the middle, also on a fast machine: some done, some not.
corpus3="$work/photos-shard-1"
shard_size=30
python3 - "$corpus" "$corpus3" 1 "$shards" "$shard_size" <<'PY'
import hashlib, itertools, os, sys
source, target, index, count, size = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
images = sorted(os.path.join(d, f) for d, _, fs in os.walk(source) for f in fs)
os.makedirs(target)
names = (f"p-{k:04d}.jpg" for k in itertools.count())
mine = (n for n in names if int.from_bytes(hashlib.sha256(n.encode()).digest()[:4], "big") % count == index)
for name, image in zip(itertools.islice(mine, size), itertools.cycle(images)):
    os.link(image, os.path.join(target, name))
PY
out3="$work/run3"
job3=$(PHOTOS="$corpus3" CONVERTED="$out3" sbatch --parsable --array=1 --cpus-per-task=1 "$work/convert.sbatch")
journal="$out3/manifest.shard-1-of-$shards.journal"
for _ in $(seq 1200); do [ "$(cat "$journal" 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.05; done
scancel "${job3}_1"
for _ in $(seq 200); do [ "$(task_state "${job3}_1")" = CANCELLED ] && break; sleep 0.1; done
cancelled_state=$(task_state "${job3}_1")
# What the killed run had finished: outputs under their final names (inode, mtime), and temporaries.
finished=$(cd "$out3" && find . -name '*.jpg' ! -name '.*' -printf '%P %i %T@\n' | sort)
done_before=$(grep -c . <<<"$finished" || true)
check "task cancelled mid-shard ($cancelled_state): $done_before of $shard_size outputs finished" "[ '$cancelled_state' = CANCELLED ] && [ $done_before -ge 1 ] && [ $done_before -lt $shard_size ]"
scontrol requeue "${job3}_1"
for _ in $(seq 600); do [ "$(task_state "${job3}_1")" = COMPLETED ] && break; sleep 0.2; done
log3="granite-convert-${job3}_1.log"
summary3=$(grep -E '^shard 1/[0-9]+: converted ' "$log3" | tail -1 || true)
check "requeued task completed: '$summary3' (skipped = the $done_before finished before)" "[ '$(task_state "${job3}_1")' = COMPLETED ] && grep -qE '^shard 1/$shards: converted $((shard_size - done_before)), skipped $done_before, failed 0' <<<'$summary3'"
after=$(cd "$out3" && find . -name '*.jpg' ! -name '.*' -printf '%P %i %T@\n' | sort)
rewritten=$(comm -23 <(echo "$finished") <(echo "$after") | wc -l)
check "the $done_before finished outputs were not written again (same inode and mtime): $rewritten were" "[ $rewritten -eq 0 ]"
check "no temporaries and no journal left" "! find '$out3' -name '.*.tmp-*' | grep . >/dev/null && [ ! -e '$journal' ]"
check "the requeued task's part lists each of its $shard_size inputs once" "python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"entries\"]; o=[x[\"output\"] for x in e]; sys.exit(not (len(o)==len(set(o))==$shard_size))' '$out3/manifest.shard-1-of-$shards.json'"

# Scheduler overhead per task: an array of empty tasks, each writing when it started and ended.
submitted=$(now)
sbatch --wait --array=0-3 --output=/dev/null --wrap 'date +%s.%N >"empty-$SLURM_ARRAY_TASK_ID.start"' >/dev/null
returned=$(now)
overhead=$(python3 - "$submitted" "$returned" empty-*.start <<'PY'
import statistics, sys
sub, ret = float(sys.argv[1]), float(sys.argv[2])
starts = [float(open(f).read()) for f in sys.argv[3:]]
print(f"submit to start {statistics.median(starts) - sub:.2f} s (median of {len(starts)}), "
      f"last start to sbatch --wait's return {ret - max(starts):.2f} s (its polling)")
PY
)
echo "slurm: scheduler overhead per task: $overhead"

# --- Kubernetes: the Indexed Job ---
kv="$ROOT/.venv/bin/kubernetes-validate"
rc=0; "$kv" --strict -k "$KUBERNETES_VERSION" "$work/job.yaml" >"$work/kv.log" 2>&1 || rc=$?
check "the Indexed Job validates (kubernetes-validate --strict, Kubernetes $KUBERNETES_VERSION)" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || cat "$work/kv.log"
sed 's/completionMode: Indexed/completionMode: Indexed\n  completionz: 4/' "$work/job.yaml" >"$work/broken.yaml"
rc=0; "$kv" --strict -k "$KUBERNETES_VERSION" "$work/broken.yaml" >"$work/kv-broken.log" 2>&1 || rc=$?
check "a copy with an unknown field fails the same validation" "[ $rc -ne 0 ]"
# Each index as its pod would run: the container's command, its mounts mapped to local folders,
# JOB_COMPLETION_INDEX set (and a stray SLURM_ARRAY_TASK_ID, which it must take precedence over).
out4="$work/k8s"
rc=0; "$ROOT/.venv/bin/python" - "$work/job.yaml" "$corpus" "$out4" "$granite" >"$work/k8s.log" 2>&1 <<'PY' || rc=$?
import os, subprocess, sys, yaml
job, photos, out, granite = yaml.safe_load(open(sys.argv[1])), *sys.argv[2:]
spec = job["spec"]
assert spec["completionMode"] == "Indexed"
container = spec["template"]["spec"]["containers"][0]
volumes = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in spec["template"]["spec"]["volumes"]}
local = {"photos": photos, "converted": out}
mounts = {m["mountPath"]: local[volumes[m["name"]]] for m in container["volumeMounts"]}
command = [mounts.get(a, a) for a in container["command"]]
assert command[0] == "granite" and f"auto/{spec['completions']}" in command, command
command[0] = granite
for index in range(spec["completions"]):
    env = dict(os.environ, JOB_COMPLETION_INDEX=str(index), SLURM_ARRAY_TASK_ID="0")
    rc = subprocess.run(command, env=env).returncode
    print(f"index {index}: exit {rc}")
    if rc: sys.exit(rc)
PY
check "the Job's command for JOB_COMPLETION_INDEX 0..$((shards - 1)) exits 0" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || cat "$work/k8s.log"
check "each index wrote its own part" "[ \$(ls '$out4' | grep -c '^manifest.shard-[0-9]-of-$shards.json$') -eq $shards ]"
rc=0; granite manifest merge "$out4" >"$work/merge4.log" 2>&1 || rc=$?
check "merged, the Job's outputs equal the unsharded run byte for byte" "[ $rc -eq 0 ] && same_as_reference '$out4'"
echo "slurm: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail

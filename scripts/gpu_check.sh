#!/usr/bin/env bash
# The GPU check (issue 31): on a machine with one NVIDIA GPU, PyTorch, transformers and
# accelerate installed and no network, in one run of under 8 minutes: install the carried wheels
# (scripts/gpu_wheels.sh fills .whl/ beforehand, where pip reaches the index), print the GPU and
# library versions, build the data, run `travelgym train grpo` on COMPASS and Behavior2Trip with
# batched rollouts on CUDA, benchmarks/batched_rollouts.py (tiny and ~100M random Llama, fp32 and
# bf16) and the training tests (pytest -m train) on CUDA. Every step runs under `timeout` (and
# within what is left of GPU_CHECK_BUDGET seconds), its output in a log under $OUT; the figures
# go to $OUT/gpu_summary.json (docs/benchmarks.md, "GPU path (one H200)", says how it is run).
#
#   bash scripts/gpu_check.sh                      # everything, logs in $OUT (default runs/gpu-check)
#   GPU_CHECK_STEPS="setup bench" bash scripts/gpu_check.sh   # a subset (setup is always needed)
#
# $OUT gets at most 8 files: setup.log data.log grpo_compass.log grpo_behavior2trip.log
# bench.log tests.log gpu_summary.json.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/runs/gpu-check}
mkdir -p "$OUT"
BUDGET=${GPU_CHECK_BUDGET:-470}   # seconds for all steps together (the run: under 8 minutes)
STEPS=${GPU_CHECK_STEPS:-setup data grpo bench tests}
WORK=${GPU_CHECK_WORK:-/tmp/gpu-check}
SITE=$WORK/site
mkdir -p "$WORK"
STEP_LOG=$WORK/steps.jsonl
: >"$STEP_LOG"
rm -f "$WORK"/bench-*.json "$WORK/bench-beside-tests"  # a rerun on a warm machine: this run's
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false TRL_EXPERIMENTAL_SILENCE=1
export TRAVELGYM_DATA_DIR=$WORK/data HF_HOME=$WORK/hf TRAVELGYM_TEST_CACHE=$WORK/test-cache
PY=${PYTHON:-python3}
START=$(date +%s)

left() { echo $((BUDGET - ($(date +%s) - START))); }
wants() { [[ " $STEPS " == *" $1 "* ]]; }

# step NAME CAP LOG CMD...: run CMD under timeout min(CAP, what is left), output to $OUT/LOG
step() {
  local name=$1 cap=$2 log=$3
  shift 3
  local limit
  limit=$(left)
  ((limit > cap)) && limit=$cap
  if ((limit < 5)); then
    echo "=== $name: skipped, the budget is spent" | tee -a "$OUT/$log"
    printf '{"step": "%s", "rc": null, "seconds": 0, "skipped": true}\n' "$name" >>"$STEP_LOG"
    return 1
  fi
  local cmd="$*"
  ((${#cmd} > 240)) && cmd="${cmd:0:240} ..."
  echo "=== $name (timeout ${limit}s): $cmd" | tee -a "$OUT/$log"
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$OUT/$log"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  local secs
  secs=$(awk "BEGIN {printf \"%.1f\", $t1 - $t0}")
  echo "=== $name: rc $rc in ${secs}s$([[ $rc == 124 || $rc == 137 ]] && echo ' (timed out)')" \
    | tee -a "$OUT/$log"
  printf '{"step": "%s", "rc": %d, "seconds": %s, "limit": %d}\n' "$name" "$rc" "$secs" "$limit" \
    >>"$STEP_LOG"
  return "$rc"
}

summary() {
  "$PY" - "$OUT" "$WORK" "$START" <<'EOF'
import json, re, sys, time
from pathlib import Path
out, work, start = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
def load(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
summary = {"total_seconds": round(time.time() - start, 1),
           "steps": [json.loads(l) for l in (work / "steps.jsonl").read_text().splitlines() if l],
           "environment": load(work / "env.json")}
runs = {}
for run in sorted(work.glob("grpo-*")):
    curve = run / "reward_curve.jsonl"
    rows = [json.loads(l) for l in curve.read_text().splitlines() if l] if curve.exists() else []
    runs[run.name] = {"steps": len(rows),
                      "step_seconds": [r.get("seconds") for r in rows],
                      "mean_reward": [r.get("mean_reward") for r in rows],
                      "turns": [r.get("turns") for r in rows],
                      "model_tokens": [r.get("model_tokens") for r in rows],
                      "stops": [r.get("stops") for r in rows],
                      "final_model": (run / "model.safetensors").exists()}
summary["grpo"] = runs
summary["bench"] = {p.stem: load(p) for p in sorted(work.glob("bench-*.json"))}
summary["bench_beside_tests"] = (work / "bench-beside-tests").exists()
tests = out / "tests.log"
if tests.exists():
    lines = [l for l in tests.read_text(errors="replace").splitlines()
             if re.search(r"\d+ (passed|failed|error)", l)]
    summary["tests"] = lines[-1].strip("= ") if lines else None
    summary["test_failures"] = [l for l in tests.read_text(errors="replace").splitlines()
                                if l.startswith(("FAILED ", "ERROR "))][:40]
(out / "gpu_summary.json").write_text(json.dumps(summary, indent=2))
print(json.dumps({k: summary[k] for k in ("total_seconds", "steps", "tests")
                  if k in summary}, indent=1))
EOF
}
trap summary EXIT

# ---- setup: the carried wheels, travelgym itself (editable, for its entry points), versions
if wants setup; then
  step install 120 setup.log bash -c '
    set -e
    if compgen -G ".whl/*.whl" >/dev/null; then
      "$0" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$1" .whl/*.whl
      echo "installed $(ls .whl/*.whl | wc -l) carried wheels into $1"
    else
      echo "no .whl/ here: run scripts/gpu_wheels.sh where pip reaches the index, carry .whl"
    fi
    # travelgym editable: its `travelgym.suites` entry points need installed metadata
    if PYTHONPATH="$1" "$0" -m pip install -q --no-index --no-deps --no-build-isolation -e .; then
      echo "travelgym installed (editable)"
    else  # src/ on PYTHONPATH (below) and a dist-info with the entry points
      echo "editable install failed: a dist-info shim in $1, src/ on PYTHONPATH"
      "$0" - "$1" <<"PYEOF"
import sys, tomllib
from pathlib import Path
site, project = Path(sys.argv[1]), tomllib.loads(Path("pyproject.toml").read_text())["project"]
version = project["version"]
info = site / f"travelgym-{version}.dist-info"
info.mkdir(parents=True, exist_ok=True)
(info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: travelgym\nVersion: {version}\n")
groups = {**project.get("entry-points", {}), "console_scripts": project.get("scripts", {})}
(info / "entry_points.txt").write_text("".join(
    f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for g, eps in groups.items()))
PYEOF
    fi' "$PY" "$SITE"
fi
export PYTHONPATH=$SITE
"$PY" -c "import travelgym" 2>/dev/null || export PYTHONPATH=$SITE:$ROOT/src
if ! command -v travelgym >/dev/null; then  # no console script on PATH: a wrapper
  mkdir -p "$WORK/bin"
  printf '#!/bin/sh\nexec "%s" -m travelgym.cli "$@"\n' "$(command -v "$PY")" >"$WORK/bin/travelgym"
  chmod +x "$WORK/bin/travelgym"
  export PATH=$WORK/bin:$PATH
fi
if wants setup; then
  step info 60 setup.log bash -c '
    nvidia-smi || echo "no nvidia-smi"; echo; uname -a; echo "cores: $(nproc)"; free -g; echo "PYTHONPATH=$PYTHONPATH"
    "$0" - "$1" <<"PYEOF"
import importlib.metadata as md, json, os, sys
import torch
names = ["torch", "transformers", "accelerate", "trl", "datasets", "tokenizers",
         "huggingface-hub", "safetensors", "numpy", "pyarrow", "fsspec", "pandas", "pydantic",
         "typing-extensions", "anyio", "setuptools", "pytest", "pytest-xdist", "travelgym"]
versions = {}
for n in names:
    try:
        versions[n] = md.version(n)
    except md.PackageNotFoundError:
        versions[n] = None
cuda = torch.cuda.is_available()
env = {"python": sys.version.split()[0], "executable": sys.executable, "cores": os.cpu_count(),
       "versions": versions, "cuda_available": cuda, "torch_cuda": torch.version.cuda,
       "gpu": torch.cuda.get_device_name() if cuda else None,
       "capability": ".".join(map(str, torch.cuda.get_device_capability())) if cuda else None,
       "bf16": torch.cuda.is_bf16_supported() if cuda else None,
       "gpu_mib": torch.cuda.get_device_properties(0).total_memory // 2**20 if cuda else None}
try:
    from travelgym.core.registry import broken_suites, suite_names
    env["suites"], env["broken_suites"] = suite_names(), broken_suites()
except Exception as exc:
    env["suites"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(env, indent=1))
open(sys.argv[1] + "/env.json", "w").write(json.dumps(env))
import trl, datasets, transformers, accelerate  # the train extra imports (fails the step if not)
print("train extra imports: ok")
PYEOF
    rc=$?
    travelgym train grpo --help | head -3
    exit $rc' "$PY" "$WORK"
fi

# ---- the training tests on CUDA (CI=1: a missing train module fails instead of skipping);
# beside the data and GRPO steps (GPU_CHECK_PARALLEL=1, the default), before the benchmark
tests_pid=
run_tests() {
  local xdist=()
  "$PY" -c "import xdist" 2>/dev/null && xdist=(-n "${GPU_CHECK_TEST_WORKERS:-4}")
  step tests "$1" tests.log env CI=1 "$PY" -m pytest -q -rfE -m train "${xdist[@]}" \
    --basetemp "$WORK/pytest" tests/training tests/suites/behavior2trip/test_chains.py \
    tests/suites/travelplanner/test_train_planner.py tests/suites/travelplanner/test_trl_env.py
}
if wants tests && [[ ${GPU_CHECK_PARALLEL:-1} == 1 ]]; then
  run_tests 360 >/dev/null &
  tests_pid=$!
fi

# ---- data: the databases (instances and ground truth are built on first use by the runs)
if wants data; then
  step build_compass 90 data.log travelgym build compass
  step build_behavior2trip 150 data.log travelgym build behavior2trip
fi

# ---- GRPO on CUDA with batched rollouts (the tiny model; defaults otherwise)
if wants grpo; then
  step grpo_compass 120 grpo_compass.log travelgym train grpo --suite compass --model tiny \
    --max-steps 3 --rollouts batched --output-dir "$WORK/grpo-compass"
  step grpo_compass_bf16 60 grpo_compass.log travelgym train grpo --suite compass --model tiny \
    --max-steps 2 --rollouts batched --bf16 --output-dir "$WORK/grpo-compass-bf16"
  step grpo_behavior2trip 200 grpo_behavior2trip.log travelgym train grpo --suite behavior2trip \
    --model tiny --difficulty easy --limit 4 --max-steps 3 --rollouts batched \
    --output-dir "$WORK/grpo-behavior2trip"
fi

# the benchmark runs alone once the tests are done, or beside them when waiting longer would
# leave it under GPU_CHECK_BENCH_RESERVE seconds (gpu_summary.json says which)
if [[ -n $tests_pid ]]; then
  while kill -0 "$tests_pid" 2>/dev/null && (($(left) > ${GPU_CHECK_BENCH_RESERVE:-200})); do
    sleep 2
  done
  if kill -0 "$tests_pid" 2>/dev/null && wants bench; then
    echo "the tests still run: the benchmark runs beside them" | tee -a "$OUT/bench.log"
    touch "$WORK/bench-beside-tests"
  fi
elif wants tests; then
  run_tests 360 >/dev/null
fi

# ---- batched vs sequential rollouts: ~100M random Llama fp32 and bf16, then the tiny model
if wants bench; then
  for run in "100m float32 120" "100m bfloat16 90" "tiny float32 60"; do
    read -r size dtype cap <<<"$run"
    step "bench_${size}_$dtype" "$cap" bench.log "$PY" benchmarks/batched_rollouts.py \
      --model-size "$size" --device cuda --dtype "$dtype" --repeats 2 --work "$WORK/bench" \
      --out "$WORK/bench-$size-$dtype.json"
  done
fi
if [[ -n $tests_pid ]]; then
  wait "$tests_pid"
fi
# the exit status: 1 when a step failed, timed out or was skipped for want of time
! grep -qE '"rc": ([1-9]|null)' "$STEP_LOG"

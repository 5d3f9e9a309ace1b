#!/usr/bin/env bash
# Validates the Kubernetes manifests in deploy/k8s/ against the Kubernetes
# API's JSON schemas (PyPI kubernetes-validate, installed once into the
# per-user cache), strictly: unknown fields are errors.
#
#   scripts/check-k8s.sh [KUBERNETES_VERSION]   (default 1.33)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/cached-venv.sh
cached_venv k8s-validate "" kubernetes-validate
"$VENV/bin/kubernetes-validate" --strict --kubernetes-version "${1:-1.33}" deploy/k8s/*.yaml

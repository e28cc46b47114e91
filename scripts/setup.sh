#!/usr/bin/env bash
# One-time (idempotent) set-up for a fresh clone on a fresh machine:
#   system packages (Vulkan on the CPU through Mesa's lavapipe, glslc, clang, Chromium) when root,
#   pnpm at the pinned version, the workspace's npm packages, and a build of every package.
# Without root it installs nothing system-wide and says what is missing; the backends that need
# it then report themselves as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

PNPM_VERSION=12.4.2
APT_BACKPORTS=(mesa-vulkan-drivers)
APT_STABLE=(libvulkan1 libvulkan-dev glslc spirv-tools vulkan-tools chromium clang lld libclang-rt-14-dev valgrind python3 make g++ xz-utils)

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

missing_pkgs() { for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done; }
mesa_ok() { # lavapipe from Mesa >= 24 (Debian 12's 22.3 is refused by Dawn)
  local v; v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [[ -n $v ]] && dpkg --compare-versions "$v" ge 24
}

if command -v dpkg >/dev/null 2>&1; then
  need_stable=$(missing_pkgs "${APT_STABLE[@]}")
  if [[ -n $need_stable ]] || ! mesa_ok; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      log "installing system packages: ${need_stable//$'\n'/ } mesa-vulkan-drivers (bookworm-backports)"
      if grep -qs bookworm /etc/os-release && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
        echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/bookworm-backports.list
      fi
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends -t bookworm-backports "${APT_BACKPORTS[@]}" >/dev/null
      # shellcheck disable=SC2086
      [[ -z $need_stable ]] || apt-get install -y -qq --no-install-recommends $need_stable >/dev/null
    else
      log "WARNING: not root, not installing system packages. Missing: ${need_stable//$'\n'/ }$(mesa_ok || echo ' mesa-vulkan-drivers>=24 (bookworm-backports)')"
      log "  the vulkan/webgpu backends and browser tests will report themselves skipped without them"
    fi
  fi
fi

if [[ $(pnpm --version 2>/dev/null || true) != "$PNPM_VERSION" ]]; then
  log "installing pnpm $PNPM_VERSION"
  if [[ $(id -u) == 0 ]]; then npm install -g --silent "pnpm@$PNPM_VERSION"; else
    npm install --silent --prefix "$HOME/.local" "pnpm@$PNPM_VERSION"; export PATH="$HOME/.local/bin:$PATH"; fi
fi

log "pnpm install"
pnpm install --frozen-lockfile --reporter=append-only 2>&1 | tail -n 3
log "building every package"
pnpm exec turbo run build --output-logs=errors-only

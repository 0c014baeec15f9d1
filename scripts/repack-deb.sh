#!/usr/bin/env bash
# Packs a .deb again with xz (-9), in place: tauri's bundler compresses
# with gzip only. The files, their modes, the control data and md5sums are
# kept as they are; owners become root:root, as in Debian's own packages.
set -euo pipefail
for deb in "$@"; do
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  dpkg-deb --raw-extract "$deb" "$work/root"
  dpkg-deb --root-owner-group -Zxz -z9 --build "$work/root" "$work/new.deb" >/dev/null
  mv "$work/new.deb" "$deb"
  rm -rf "$work"
  trap - EXIT
done

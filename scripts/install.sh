#!/bin/sh
# Installs partfs system-wide: the binary in $PREFIX/bin (default /usr/local)
# and the mount(8) helper as /sbin/mount.fuse.partfs, so that
# `mount -t fuse.partfs DATADIR MOUNTPOINT` and /etc/fstab entries work.
set -eu
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
go build -o bin/partfs ./cmd/partfs
install -D -m 0755 bin/partfs "$prefix/bin/partfs"
install -D -m 0755 scripts/mount.fuse.partfs /sbin/mount.fuse.partfs
echo "installed $prefix/bin/partfs and /sbin/mount.fuse.partfs"

#!/usr/bin/env bash
# Mounts a partfs data directory in the background (docs/spec.md §1).
#   ./mount.sh [DATADIR [MOUNTPOINT]]   build (go build: only what changed), mount
#                                       (default ./data on ./mnt; relative paths are
#                                       from the current directory), return once the
#                                       mount answers
#   ./mount.sh -u [MOUNTPOINT]          unmount cleanly (the daemon flushes, writes
#                                       checkpoints and the clean-shutdown marker);
#                                       files still open get ENOTCONN after 2 s
#   ./mount.sh --kafka HOST:PORT[,...] [MOUNTPOINT]   mount a Kafka cluster instead (docs/spec.md §9)
# Extra daemon flags can be given in PARTFS_FLAGS (e.g. "--read-only --config retention.ms=-1").
# The daemon logs to MOUNTPOINT's sibling file .partfs-<name>.log (PARTFS_LOG overrides).
set -euo pipefail
repo=$(cd "$(dirname "$0")" && pwd)
bin=$repo/bin/partfs

die() { echo "mount.sh: $*" >&2; exit 1; }

is_mounted() { grep -qs " $(realpath -m "$1") fuse" /proc/mounts; }

# A mount whose daemon died answers every call with ENOTCONN.
is_dead() {
	local out
	out=$(stat "$1" 2>&1) && return 1
	[[ $out == *"Transport endpoint is not connected"* ]]
}

# abort_conn aborts the FUSE connection behind mount point $1 (as root, via
# fusectl), so that nothing, not even the dead daemon's own exit, stays
# blocked on it.
abort_conn() {
	local dev
	dev=$(awk -v m="$(realpath -m "$1")" '$5 == m { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -1)
	[ -n "$dev" ] && [ "$(id -u)" = 0 ] || return 0
	grep -qs fusectl /proc/mounts || mount -t fusectl none /sys/fs/fuse/connections 2>/dev/null || true
	[ -w "/sys/fs/fuse/connections/$dev/abort" ] && echo 1 >"/sys/fs/fuse/connections/$dev/abort" || true
}

clear_dead() {
	if is_dead "$1"; then
		echo "mount.sh: $1 is a dead mount (Transport endpoint is not connected); clearing it"
		abort_conn "$1"
		umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || fusermount3 -uz "$1" 2>/dev/null || fusermount -uz "$1" ||
			die "could not clear the dead mount on $1"
	fi
}

daemon_pid() { pgrep -f "partfs mount .* $(realpath -m "$1")\$" | head -1 || true; }

unmount() {
	local mnt=${1:-./mnt}
	clear_dead "$mnt"
	is_mounted "$mnt" || { echo "mount.sh: $mnt is not mounted"; return 0; }
	local pid
	pid=$(daemon_pid "$mnt")
	if [ -n "$pid" ]; then
		kill -TERM "$pid"
	elif ! umount "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount -u "$mnt" || die "could not unmount $mnt (busy?)"
	fi
	for _ in $(seq 1 300); do
		if ! is_mounted "$mnt" && { [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; }; then
			echo "mount.sh: unmounted $mnt"
			return 0
		fi
		sleep 0.1
	done
	is_mounted "$mnt" || die "$mnt is detached, but partfs (pid $pid) is still running after 30 s; see its log"
	die "$mnt is still mounted after 30 s (a process using it? see: fuser -m $mnt)"
}

# build runs go build every time: Go's build cache rebuilds only what
# changed, and leaves the binary alone when nothing did.
build() {
	command -v go >/dev/null 2>&1 || die "Go is needed to build partfs (https://go.dev/dl/)"
	(cd "$repo" && go build -ldflags "-X main.commit=$(scripts/commit.sh)" -o "$bin" ./cmd/partfs) || die "go build failed"
}

need_fuse() {
	[ -e /dev/fuse ] || die "/dev/fuse is missing (load the fuse module: modprobe fuse)"
	if [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
		if command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			echo "mount.sh: installing fuse3 (fusermount3) for non-root mounts"
			sudo -n apt-get install -y -qq fuse3 >/dev/null
		else
			die "not root and fusermount3 is missing: run as root, or install Debian's fuse3 package (apt-get install fuse3)"
		fi
	fi
}

mount_bg() {
	local data=${1:-./data} mnt=${2:-./mnt}
	need_fuse
	build
	clear_dead "$mnt"
	is_mounted "$mnt" && die "$mnt is already mounted (./mount.sh -u $mnt first)"
	[ ! -e "$mnt" ] || [ -d "$mnt" ] || die "mount point $mnt is not a directory"
	[ -n "$kafka" ] || [ ! -e "$data" ] || [ -d "$data" ] || die "data directory $data is not a directory"
	if [ ! -e "$mnt" ]; then
		echo "mount.sh: creating the mount point $mnt"
		mkdir -p "$mnt"
	elif [ -n "$(ls -A "$mnt")" ]; then
		echo "mount.sh: $mnt is not empty; its files are hidden while partfs is mounted there"
	fi
	[ -n "$kafka" ] || [ -e "$data" ] || echo "mount.sh: $data does not exist; partfs creates a new, empty data directory there"
	local log=${PARTFS_LOG:-$(dirname "$mnt")/.partfs-$(basename "$mnt").log}
	local src=("$(realpath -m "$data")")
	if [ -n "$kafka" ]; then
		src=(--kafka "$kafka")
		data="the Kafka cluster $kafka"
	fi
	# shellcheck disable=SC2086
	nohup "$bin" mount ${PARTFS_FLAGS:-} "${src[@]}" "$(realpath -m "$mnt")" >>"$log" 2>&1 </dev/null &
	local pid=$!
	for _ in $(seq 1 300); do
		if is_mounted "$mnt" && ls "$mnt" >/dev/null 2>&1; then
			cat <<USAGE
partfs (pid $pid) serves $data on $mnt; log: $log
  mkdir $mnt/TOPIC                    create a topic (partition 0)
  seq 1 10 >> $mnt/TOPIC/0/log        append one record per line
  cat $mnt/TOPIC/0/log.jsonl          read records as JSON lines
  tail -f $mnt/TOPIC/0/log            follow new records
  head $mnt/TOPIC/0/@offset/5         read from offset 5
  $0 -u $mnt                  unmount
USAGE
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "mount.sh: partfs exited before the mount answered; its log ends:" >&2
			tail -n 5 "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
	die "$mnt did not answer within 30 s; see $log"
}

kafka=""
case "${1:-}" in
-u) unmount "${2:-./mnt}" ;;
--kafka)
	[ -n "${2:-}" ] || die "--kafka needs HOST:PORT[,HOST:PORT...]"
	kafka=$2
	mount_bg "" "${3:-./mnt}"
	;;
-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' ;;
*) mount_bg "$@" ;;
esac

#!/usr/bin/env bash
#
# in_root.sh ROOT [--bind DIR | --bind-ro DIR]... COMMAND [ARG...]: run
# COMMAND as root in ROOT, a Debian root test/deps.sh made (PostgreSQL 17's,
# Debian 13), with the host's /proc and /dev and each DIR mounted at the
# same path inside, in a clean environment.  Everything is mounted in a
# mount namespace of its own: the host never sees the mounts, and they go
# with the last process the command started, however it ends (nothing is
# left mounted over the root, which can always be removed as a plain
# folder).  Runs as root (deps.sh and check.sh call it through sudo
# otherwise).
#
set -euo pipefail

# once more inside a new mount namespace, whose mounts are private: what is
# mounted below never propagates to the host's
if [ -z "${FLUSSO_IN_ROOT_NS:-}" ]; then
	exec unshare --mount --propagation private env FLUSSO_IN_ROOT_NS=1 bash "$0" "$@"
fi

root=$1
shift
# the root a mount point of its own, so that / is in the chroot's
# /proc/self/mounts: Java finds a file's file system there (walking up to
# where the device changes, which in the root is /), and OpenSearch asks
# for its data folder's
mount --bind "$root" "$root"
# the chroot's view of the host: processes (postgres, java and ps read
# /proc), devices (/dev/null, /dev/shm for PostgreSQL's shared memory)
mount --rbind /proc "$root/proc"
mount --rbind /dev "$root/dev"

# made[i]: a mount point this run made, and (tops[i]) the first folder of
# its path that did not exist before
made=()
tops=()
while [ $# -gt 0 ]; do
	case $1 in
		--bind | --bind-ro)
			dir=$(cd "$2" && pwd)
			if [ ! -d "$root$dir" ]; then
				top=$dir
				while [ ! -d "$root$(dirname "$top")" ]; do top=$(dirname "$top"); done
				mkdir -p "$root$dir"
				made+=("$root$dir")
				tops+=("$root$top")
			fi
			mount --bind "$dir" "$root$dir"
			[ "$1" = --bind-ro ] && mount -o remount,bind,ro "$root$dir"
			shift 2
			;;
		*) break ;;
	esac
done

# what a Debian 13 user's shell would have, not the host's (its PATH may
# name tools that do not exist in the root); the caller passes the rest
# with env
rc=0
chroot "$root" env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" || rc=$?

# the mount points made for this run only, so that the root does not fill
# up with empty folders (lazily: a server the command left running keeps
# the namespace, and the host does not see it anyway)
for i in "${!made[@]}"; do
	dir=${made[i]}
	umount -l "$dir" || continue
	while rmdir "$dir" 2>/dev/null && [ "$dir" != "${tops[i]}" ]; do dir=$(dirname "$dir"); done
done
exit $rc

#!/bin/sh
# Fetch QuickJS 2025-04-26 as Debian's `quickjs` source package from the
# `trixie` suite, through a private apt configuration that lives inside the
# build directory (the machine's apt sources are never touched), check the
# pinned SHA-256 sums, and unpack the files the static library needs, plus
# those of QuickJS's own `qjs` shell (qjs.c, qjsc.c, quickjs-libc, repl.js),
# which only bench/ builds, as a reference for the engine codecage embeds.
# Then apply codecage's own patches, deps/quickjs/patches/*.patch in name
# order (each says what it fixes and why), after the checksum check.
#
# usage: fetch-quickjs.sh OUTDIR
# Writes OUTDIR/quickjs.c ... OUTDIR/quickjs.h and OUTDIR/patches.sha256
# (the sums of the patches applied); re-running with a complete OUTDIR whose
# patches are the current ones is a no-op, otherwise it fetches again. Needs apt-get (Debian) and the machine's own Debian
# mirror: its address is read from the machine's apt sources (the URI that
# serves this release's main suite, deb822 `.sources` or one-line `.list`),
# or taken from CODECAGE_DEBIAN_MIRROR. No host name is written here.
set -eu
out=$1
version=2025.04.26-1
orig_sha256=ec81da5b3249ed648dbc7df4a1654988910e66a118d9b71cb63534216efcfbbe
files="quickjs.c quickjs.h quickjs-atom.h quickjs-opcode.h libregexp.c libregexp.h
libregexp-opcode.h libunicode.c libunicode.h libunicode-table.h cutils.c cutils.h
dtoa.c dtoa.h list.h VERSION qjs.c qjsc.c quickjs-libc.c quickjs-libc.h repl.js"

mkdir -p "$out"
out=$(cd "$out" && pwd)
patches=$(cd "$(dirname "$0")/../deps/quickjs/patches" && pwd)
patch_sums=$(cd "$patches" && sha256sum ./*.patch)
complete=1
for f in $files; do [ -f "$out/$f" ] || complete=0; done
[ "$(cat "$out/patches.sha256" 2>/dev/null)" = "$patch_sums" ] || complete=0
[ $complete = 1 ] && exit 0
rm -f "$out/patches.sha256"

apt="$out/apt"
mkdir -p "$apt/etc/sources.list.d" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" \
         "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/src"
# The mirror: the first URI in the machine's apt sources whose suites name
# this release's codename exactly (so not its -security or -updates archive).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirror=${CODECAGE_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" '
        function flush() { if (uri != "" && ok && found == "") found = uri; uri = ""; ok = 0 }
        /^[ \t]*$/ { flush(); next }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) ok = 1 }
        END { flush(); print found }')
fi
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v c="$codename" '
        $1 == "deb" || $1 == "deb-src" {
            i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
            if ($(i + 1) == c) { print $i; exit }
        }')
fi
if [ -z "$mirror" ]; then
    echo "fetch-quickjs: no Debian mirror for '$codename' in /etc/apt/sources*; set CODECAGE_DEBIAN_MIRROR to its URI" >&2
    exit 1
fi
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
    > "$apt/etc/sources.list"
cat > "$apt/apt.conf" <<CONF
Dir::Etc "$apt/etc";
Dir::Etc::sourcelist "$apt/etc/sources.list";
Dir::Etc::sourceparts "$apt/etc/sources.list.d";
Dir::Etc::preferencesparts "$apt/etc/preferences.d";
Dir::Etc::parts "$apt/etc/apt.conf.d";
Dir::State "$apt/state";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
APT::Sandbox::User "root";
// A mirror that serves a snapshot of the newer suite may carry an expired Release file.
Acquire::Check-Valid-Until "false";
CONF
: > "$apt/state/status"
export APT_CONFIG="$apt/apt.conf"
tarball="$apt/src/quickjs_2025.04.26.orig.tar.xz"
# A tarball already here (a patch changed since) is checked below like a new one.
if [ ! -f "$tarball" ]; then
    apt-get -q update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; exit 1; }
    (cd "$apt/src" && apt-get -q source --download-only "quickjs=$version") >"$apt/source.log" 2>&1 \
        || { cat "$apt/source.log" >&2; exit 1; }
fi
echo "$orig_sha256  $tarball" | sha256sum -c - >/dev/null \
    || { echo "fetch-quickjs: SHA-256 mismatch for $tarball" >&2; exit 1; }
rm -rf "$apt/src/unpack" && mkdir -p "$apt/src/unpack"
tar -xJf "$tarball" -C "$apt/src/unpack"
src="$apt/src/unpack/quickjs-2025.04.26"
for p in "$patches"/*.patch; do
    patch -s -p1 -d "$src" --no-backup-if-mismatch < "$p" \
        || { echo "fetch-quickjs: $p does not apply to QuickJS $version" >&2; exit 1; }
done
for f in $files; do cp "$src/$f" "$out/$f"; done
echo "$patch_sums" > "$out/patches.sha256"

#!/bin/sh
# Print the Debian packages that provide the shared libraries a binary links against directly (its ELF
# NEEDED entries; apt brings their own dependencies) and the ones it opens with dlopen (DLOPENED below),
# one per line (Swift's own libraries excluded: the release build links them statically). Used by
# Deploy/Containerfile in its build stage, so the runtime stage installs exactly what the binary needs,
# also when Package.swift gains a library (libnghttp2-14 and libssl3 for the APNs port came in that way).
# Tested by Tests/integration/test_deploy.py.
#   usage: runtime-packages.sh BINARY
set -eu
binary="$1"
# Opened with dlopen when thumbnails are turned on, so not NEEDED entries: keep in step with the
# CVIPS_LIBRARY / CCURL_LIBRARY names in Sources/CVips/shim.h and Sources/CCurl/shim.h. And the plugin
# libwebsockets opens for the default epoll loop (`serve --event-loop epoll`, Sources/CLibEv/shim.h).
DLOPENED="libvips.so.42 libcurl.so.4 libwebsockets-evlib_ev.so"
for soname in $DLOPENED; do
    dpkg -S "*/$soname" >/dev/null 2>&1 || { echo "runtime-packages: no installed package has $soname (install its -dev package)" >&2; exit 1; }
done
{
    objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }'
    for soname in $DLOPENED; do echo "$soname"; done
} | while read -r soname; do
    case "$soname" in
        libswift*|libFoundation*|lib_Foundation*|libdispatch.so|libBlocksRuntime.so|ld-linux*) continue ;;
    esac
    dpkg -S "*/$soname" 2>/dev/null | cut -d: -f1 | head -n 1
done | sort -u

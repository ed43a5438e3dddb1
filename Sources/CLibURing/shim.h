/*
 * CLibURing: liburing 2 (Debian's liburing-dev), the kernel's io_uring. This module only links it and names its
 * Debian package (Package.swift); the calls the server makes are in the CSendRing target, which includes
 * liburing.h itself (CSendRing/send_ring.c says why Swift does not import it).
 */
#ifndef CLIBURING_SHIM_H
#define CLIBURING_SHIM_H
#endif

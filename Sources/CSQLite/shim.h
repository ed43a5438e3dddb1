/*
 * CSQLite: SQLite 3 (Debian libsqlite3-dev) for Swift.
 *
 * SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import; this returns it,
 * so that bound text is copied by SQLite before the Swift buffer goes away.
 */
#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

#include <sqlite3.h>

static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif

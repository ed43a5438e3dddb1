/*
 * CHiredis: the Redis client library hiredis (Debian libhiredis-dev) for Swift.
 *
 * redisReply's type constants are macros Swift imports as Int32; the reply accessors below exist because
 * Swift sees `struct redisReply **element` awkwardly and the variadic redisCommand cannot be called.
 */
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>

static inline redisReply *chiredis_element(redisReply *reply, size_t index) { return reply->element[index]; }

#endif

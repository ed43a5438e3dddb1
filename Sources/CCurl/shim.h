/*
 * CCurl: libcurl (Debian libcurl4-openssl-dev) for Swift: fetching remote images for thumbnails.
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic C functions (the option decides the argument's type),
 * which Swift cannot call; these static inline wrappers fix one argument type each. Every wrapper is
 * prefixed with the module name.
 */
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <stddef.h>

/* The write callback's shape: (data, 1, count, user) -> bytes taken (anything else aborts the transfer). */
typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *user);

/* curl_easy_setopt for options that take a long (timeouts, flags, limits). */
static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl_easy_setopt for options that take a curl_off_t (CURLOPT_MAXFILESIZE_LARGE). */
static inline CURLcode ccurl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl_easy_setopt for options that take a C string (libcurl copies it). */
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl_easy_setopt for options that take a pointer kept by libcurl (CURLOPT_WRITEDATA, CURLOPT_RESOLVE's list). */
static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/* curl_easy_setopt(CURLOPT_WRITEFUNCTION, callback). */
static inline CURLcode ccurl_setopt_write_function(CURL *handle, ccurl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/* curl_easy_getinfo for long results (CURLINFO_RESPONSE_CODE). */
static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* curl_easy_getinfo for string results owned by the handle (CURLINFO_PRIMARY_IP, CURLINFO_REDIRECT_URL,
 * CURLINFO_CONTENT_TYPE); *value may be NULL. */
static inline CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    char *result = NULL;
    CURLcode code = curl_easy_getinfo(handle, info, &result);
    *value = result;
    return code;
}

#endif

/*
 * CCurl: libcurl for Swift: fetching remote images for thumbnails.
 *
 * Why this is not an ordinary module map linking libcurl: libcurl and its dependencies (gnutls/nettle,
 * krb5, ldap, ssh, rtmp, psl, …) add megabytes of mapped, resident pages to every server, and only
 * servers with thumbnails on (an image cache folder) fetch images. So the library is not linked:
 * ccurl_load opens libcurl.so.4 with dlopen (RTLD_NOW | RTLD_LOCAL) the first time thumbnails are turned
 * on and resolves each function below with dlsym; every curl function the Swift code calls is a ccurl_*
 * wrapper calling through those pointers. <curl/curl.h> (Debian libcurl4-openssl-dev) is included for its
 * types and constants only; calling a curl_* function directly from Swift fails to link, on purpose.
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic C functions (the option decides the argument's type),
 * which Swift cannot call; the setopt/getinfo wrappers fix one argument type each. Every wrapper is
 * prefixed with the module name, and fails (CURLE_FAILED_INIT, NULL) rather than crash when the library is
 * not loaded.
 */
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* The library opened at run time (Debian: libcurl4). Deploy/runtime-packages.sh installs its package. */
#define CCURL_LIBRARY "libcurl.so.4"

/* The libcurl functions we call, resolved from the library (prototypes from <curl/curl.h>, <curl/easy.h>).
 * The fields are not named after the functions: curl.h defines curl_easy_setopt(…) and
 * curl_easy_getinfo(…) as function-like macros. */
typedef struct ccurl_functions {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
} ccurl_functions;

/* The state of the one load attempt (per object file that uses these wrappers; dlopen hands out the
 * same library each time). */
typedef struct ccurl_library {
    int loaded;                  /* 1 loaded, -1 failed */
    char error[256];             /* why loading failed */
    ccurl_functions functions;
} ccurl_library;

/* Storage for the load attempt (a function, since a header cannot define one shared variable). */
static inline ccurl_library *ccurl_library_storage(void) {
    static ccurl_library library;
    return &library;
}

/* Opens libcurl and resolves every function, once (pthread_once): on failure records why. */
static inline void ccurl_library_open(void) {
    ccurl_library *library = ccurl_library_storage();
    ccurl_functions *f = &library->functions;
    void *handle = dlopen(CCURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s", reason ? reason : "cannot open " CCURL_LIBRARY);
        library->loaded = -1;
        return;
    }
#define CCURL_RESOLVE(field, name) \
    do { \
        void *symbol = dlsym(handle, name); \
        if (!symbol) { \
            snprintf(library->error, sizeof library->error, "%s has no %s", CCURL_LIBRARY, name); \
            dlclose(handle); \
            library->loaded = -1; \
            return; \
        } \
        *(void **)&f->field = symbol; \
    } while (0)
    CCURL_RESOLVE(global_init, "curl_global_init");
    CCURL_RESOLVE(easy_init, "curl_easy_init");
    CCURL_RESOLVE(easy_cleanup, "curl_easy_cleanup");
    CCURL_RESOLVE(easy_perform, "curl_easy_perform");
    CCURL_RESOLVE(easy_strerror, "curl_easy_strerror");
    CCURL_RESOLVE(easy_setopt, "curl_easy_setopt");
    CCURL_RESOLVE(easy_getinfo, "curl_easy_getinfo");
    CCURL_RESOLVE(slist_append, "curl_slist_append");
    CCURL_RESOLVE(slist_free_all, "curl_slist_free_all");
#undef CCURL_RESOLVE
    library->loaded = 1;
}

/* The resolved functions, or NULL when libcurl cannot be loaded. Loads it on the first call. */
static inline const ccurl_functions *ccurl_functions_loaded(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ccurl_library_open);
    ccurl_library *library = ccurl_library_storage();
    return library->loaded > 0 ? &library->functions : NULL;
}

/* Why this exists: loads libcurl at run time instead of at start (see the top). Returns 0 when libcurl is
 * loaded, or -1 with the reason (dlerror's text or a missing function) in `error`. */
static inline int ccurl_load(char *error, size_t capacity) {
    if (ccurl_functions_loaded()) return 0;
    if (capacity) snprintf(error, capacity, "%s", ccurl_library_storage()->error);
    return -1;
}

/* Why this exists: libcurl is reached through dlsym. curl_global_init (not thread-safe: call it once,
 * before any transfer). */
static inline CURLcode ccurl_global_init(long flags) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->global_init(flags) : CURLE_FAILED_INIT;
}

/* Why this exists: libcurl is reached through dlsym. curl_easy_init: a new handle, or NULL. */
static inline CURL *ccurl_easy_init(void) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_init() : NULL;
}

/* Why this exists: libcurl is reached through dlsym. curl_easy_cleanup. */
static inline void ccurl_easy_cleanup(CURL *handle) {
    const ccurl_functions *f = ccurl_functions_loaded();
    if (f) f->easy_cleanup(handle);
}

/* Why this exists: libcurl is reached through dlsym. curl_easy_perform: runs the transfer (blocking). */
static inline CURLcode ccurl_easy_perform(CURL *handle) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_perform(handle) : CURLE_FAILED_INIT;
}

/* Why this exists: libcurl is reached through dlsym. curl_easy_strerror: a static description of `code`. */
static inline const char *ccurl_easy_strerror(CURLcode code) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_strerror(code) : "libcurl is not loaded";
}

/* Why this exists: libcurl is reached through dlsym. curl_slist_append: the list with a copy of `string`
 * appended (a new list when `list` is NULL), or NULL on failure. */
static inline struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->slist_append(list, string) : NULL;
}

/* Why this exists: libcurl is reached through dlsym. curl_slist_free_all (NULL is fine). */
static inline void ccurl_slist_free_all(struct curl_slist *list) {
    const ccurl_functions *f = ccurl_functions_loaded();
    if (f) f->slist_free_all(list);
}

/* The write callback's shape: (data, 1, count, user) -> bytes taken (anything else aborts the transfer). */
typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *user);

/* Why this exists: curl_easy_setopt is variadic. For options that take a long (timeouts, flags, limits). */
static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_setopt is variadic. For options that take a curl_off_t
 * (CURLOPT_MAXFILESIZE_LARGE). */
static inline CURLcode ccurl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_setopt is variadic. For options that take a C string (libcurl copies it). */
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_setopt is variadic. For options that take a pointer kept by libcurl
 * (CURLOPT_WRITEDATA, CURLOPT_RESOLVE's list). */
static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_setopt is variadic. curl_easy_setopt(CURLOPT_WRITEFUNCTION, callback). */
static inline CURLcode ccurl_setopt_write_function(CURL *handle, ccurl_write_callback callback) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_getinfo is variadic. For long results (CURLINFO_RESPONSE_CODE). */
static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    return f ? f->easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

/* Why this exists: curl_easy_getinfo is variadic. For string results owned by the handle
 * (CURLINFO_PRIMARY_IP, CURLINFO_REDIRECT_URL, CURLINFO_CONTENT_TYPE); *value may be NULL. */
static inline CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    const ccurl_functions *f = ccurl_functions_loaded();
    char *result = NULL;
    CURLcode code = f ? f->easy_getinfo(handle, info, &result) : CURLE_FAILED_INIT;
    *value = result;
    return code;
}

#endif

/*
 * CVips: libvips for Swift: decoding PNG/JPEG/GIF/WebP, fitting and encoding PNG thumbnails.
 *
 * Why this is not an ordinary module map over <vips/vips.h>: libvips and its dependencies (glib, librsvg,
 * OpenEXR, hdf5, fftw, X11, …: over a hundred libraries) add ~30 MB of mapped, resident pages to every
 * server, and only servers with thumbnails on (an image cache folder) use them. So the library is not
 * linked: cvips_load opens libvips.so.42 with dlopen (RTLD_NOW | RTLD_LOCAL) the first time thumbnails
 * are turned on and resolves each function below with dlsym; the wrappers call through those pointers.
 * The few prototypes we call are declared here (opaque image pointers, variadic functions through
 * variadic function pointers), so neither libvips' nor glib's headers nor include paths are needed.
 *
 * libvips' operations take their optional arguments as a NULL-terminated variadic list, which Swift
 * cannot call, and VIPS_INIT is a macro; these static inline wrappers fix the arguments we use. Every
 * wrapper is prefixed with the module name. Each wrapper fails (NULL, -1, "") rather than crash when the
 * library is not loaded.
 */
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* The library opened at run time (Debian: libvips42). Deploy/runtime-packages.sh installs its package. */
#define CVIPS_LIBRARY "libvips.so.42"

/* Values copied from libvips 8.14's headers (/usr/include/vips/…, Debian libvips-dev 8.14.1); libvips
 * keeps them stable within ABI 42. */
enum {
    CVIPS_ABI = 42,                  /* VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE = 58 - 16, vips/version.h */
    CVIPS_ACCESS_SEQUENTIAL = 1,     /* VipsAccess VIPS_ACCESS_SEQUENTIAL, vips/image.h */
    CVIPS_SIZE_BOTH = 0,             /* VipsSize VIPS_SIZE_BOTH, vips/resample.h */
    CVIPS_INTERESTING_CENTRE = 1,    /* VipsInteresting VIPS_INTERESTING_CENTRE, vips/conversion.h */
    CVIPS_TRUE = 1,                  /* glib's TRUE, a gboolean (int) */
};

/* VipsImage, only ever handled through pointers. */
typedef struct cvips_image cvips_image;

/* The libvips (and glib) functions we call, resolved from the library; prototypes as in libvips 8.14. */
typedef struct cvips_functions {
    int (*vips_init)(const char *argv0);                                   /* vips/vips.h */
    int (*vips_version)(int flag);                                         /* vips/vips.h */
    void (*vips_cache_set_max)(int max);                                   /* vips/operation.h */
    void (*vips_concurrency_set)(int concurrency);                         /* vips/operation.h */
    const char *(*vips_foreign_find_load_buffer)(const void *data, size_t size);           /* vips/foreign.h */
    cvips_image *(*vips_image_new_from_buffer)(const void *buf, size_t len, const char *option_string, ...); /* vips/image.h */
    int (*vips_image_get_width)(const cvips_image *image);                 /* vips/header.h */
    int (*vips_image_get_height)(const cvips_image *image);                /* vips/header.h */
    int (*vips_image_get_n_pages)(cvips_image *image);                     /* vips/header.h */
    int (*vips_thumbnail_buffer)(void *buf, size_t len, cvips_image **out, int width, ...); /* vips/resample.h */
    int (*vips_pngsave_buffer)(cvips_image *in, void **buf, size_t *len, ...);              /* vips/foreign.h */
    const char *(*vips_error_buffer)(void);                                /* vips/error.h */
    void (*vips_error_clear)(void);                                        /* vips/error.h */
    void (*g_object_unref)(void *object);                                  /* libgobject-2.0, a libvips dependency */
    void (*g_free)(void *memory);                                          /* libglib-2.0, a libvips dependency */
} cvips_functions;

/* The state of the one load attempt (per object file that uses these wrappers; dlopen hands out the
 * same library each time). */
typedef struct cvips_library {
    int loaded;                  /* 1 loaded, -1 failed */
    char error[256];             /* why loading failed */
    cvips_functions functions;
} cvips_library;

/* Storage for the load attempt (a function, since a header cannot define one shared variable). */
static inline cvips_library *cvips_library_storage(void) {
    static cvips_library library;
    return &library;
}

/* Opens libvips and resolves every function, once (pthread_once): on failure records why. */
static inline void cvips_library_open(void) {
    cvips_library *library = cvips_library_storage();
    cvips_functions *f = &library->functions;
    void *handle = dlopen(CVIPS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s", reason ? reason : "cannot open " CVIPS_LIBRARY);
        library->loaded = -1;
        return;
    }
    /* dlsym on the handle also searches libvips' own dependencies (glib, gobject). */
#define CVIPS_RESOLVE(name) \
    do { \
        void *symbol = dlsym(handle, #name); \
        if (!symbol) { \
            snprintf(library->error, sizeof library->error, "%s has no %s", CVIPS_LIBRARY, #name); \
            goto failed; \
        } \
        *(void **)&f->name = symbol; \
    } while (0)
    CVIPS_RESOLVE(vips_init);
    CVIPS_RESOLVE(vips_version);
    CVIPS_RESOLVE(vips_cache_set_max);
    CVIPS_RESOLVE(vips_concurrency_set);
    CVIPS_RESOLVE(vips_foreign_find_load_buffer);
    CVIPS_RESOLVE(vips_image_new_from_buffer);
    CVIPS_RESOLVE(vips_image_get_width);
    CVIPS_RESOLVE(vips_image_get_height);
    CVIPS_RESOLVE(vips_image_get_n_pages);
    CVIPS_RESOLVE(vips_thumbnail_buffer);
    CVIPS_RESOLVE(vips_pngsave_buffer);
    CVIPS_RESOLVE(vips_error_buffer);
    CVIPS_RESOLVE(vips_error_clear);
    CVIPS_RESOLVE(g_object_unref);
    CVIPS_RESOLVE(g_free);
#undef CVIPS_RESOLVE
    /* VIPS_INIT's check: the declarations above are for ABI 42. */
    {
        int abi = f->vips_version(3) - f->vips_version(5);
        if (abi != CVIPS_ABI) {
            snprintf(library->error, sizeof library->error, "%s has ABI version %d, not %d", CVIPS_LIBRARY, abi, CVIPS_ABI);
            goto failed;
        }
    }
    library->loaded = 1;
    return;
failed:
    dlclose(handle);
    library->loaded = -1;
}

/* The resolved functions, or NULL when libvips cannot be loaded. Loads it on the first call. */
static inline const cvips_functions *cvips_functions_loaded(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cvips_library_open);
    cvips_library *library = cvips_library_storage();
    return library->loaded > 0 ? &library->functions : NULL;
}

/* Why this exists: loads libvips at run time instead of at start (see the top). Returns 0 when libvips is
 * loaded, or -1 with the reason (dlerror's text, a missing function, an ABI mismatch) in `error`. */
static inline int cvips_load(char *error, size_t capacity) {
    if (cvips_functions_loaded()) return 0;
    if (capacity) snprintf(error, capacity, "%s", cvips_library_storage()->error);
    return -1;
}

/* Why this exists: VIPS_INIT is a macro. Starts libvips once per process (vips_init). Returns 0 on
 * success. Also turns off the operation cache (it would keep decoded images and our input buffers alive)
 * and runs each operation on one thread (fetch workers already run several at once). */
static inline int cvips_init(const char *program) {
    const cvips_functions *f = cvips_functions_loaded();
    if (!f || f->vips_init(program)) return -1;
    f->vips_cache_set_max(0);
    f->vips_concurrency_set(1);
    return 0;
}

/* Why this exists: libvips is reached through dlsym. The loader libvips would pick for these bytes
 * (e.g. "VipsForeignLoadPngBuffer"), or NULL if none. */
static inline const char *cvips_loader_for(const void *data, size_t length) {
    const cvips_functions *f = cvips_functions_loaded();
    return f ? f->vips_foreign_find_load_buffer(data, length) : NULL;
}

/* Why this exists: vips_image_new_from_buffer is variadic. Reads only the header of an image in memory
 * (no pixels decoded): width, height and page count. Returns 0 on success. `data` must stay alive until
 * this returns. */
static inline int cvips_header(const void *data, size_t length, int *width, int *height, int *pages) {
    const cvips_functions *f = cvips_functions_loaded();
    if (!f) return -1;
    cvips_image *image = f->vips_image_new_from_buffer(data, length, "", "access", CVIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    *width = f->vips_image_get_width(image);
    *height = f->vips_image_get_height(image);
    *pages = f->vips_image_get_n_pages(image);
    f->g_object_unref(image);
    return 0;
}

/* Why this exists: vips_thumbnail_buffer and vips_pngsave_buffer are variadic. Scales an image in memory
 * to fill width×height and crops the centre (first page/frame only), then encodes it as PNG (metadata
 * stripped). On success *png is a g_malloc'd buffer of *png_length bytes, to be freed with cvips_free.
 * Returns 0 on success. */
static inline int cvips_fill_png(const void *data, size_t length, int width, int height, void **png, size_t *png_length) {
    const cvips_functions *f = cvips_functions_loaded();
    if (!f) return -1;
    cvips_image *thumbnail = NULL;
    if (f->vips_thumbnail_buffer((void *)data, length, &thumbnail, width,
                                 "height", height,
                                 "size", CVIPS_SIZE_BOTH,
                                 "crop", CVIPS_INTERESTING_CENTRE,
                                 NULL)) return -1;
    int failed = f->vips_pngsave_buffer(thumbnail, png, png_length, "strip", CVIPS_TRUE, NULL);
    f->g_object_unref(thumbnail);
    return failed ? -1 : 0;
}

/* Why this exists: g_free is glib's, reached through libvips' handle. Frees a buffer libvips allocated
 * (cvips_fill_png's output). */
static inline void cvips_free(void *buffer) {
    const cvips_functions *f = cvips_functions_loaded();
    if (f) f->g_free(buffer);
}

/* Why this exists: the message must be copied before libvips' buffer is cleared. libvips' last error
 * message(s), then clears them (per thread). The returned text is copied by the caller before the next
 * libvips call. */
static inline const char *cvips_error_take(void) {
    static __thread char copy[512];
    const cvips_functions *f = cvips_functions_loaded();
    if (!f) return "";
    const char *text = f->vips_error_buffer();
    snprintf(copy, sizeof copy, "%s", text ? text : "");
    f->vips_error_clear();
    return copy;
}

#endif

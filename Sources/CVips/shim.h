/*
 * CVips: libvips (Debian libvips-dev) for Swift: decoding PNG/JPEG/GIF/WebP, fitting and encoding PNG
 * thumbnails.
 *
 * libvips' operations take their optional arguments as a NULL-terminated variadic list
 * (`vips_thumbnail_buffer(buf, len, &out, width, "height", h, "crop", …, NULL)`), which Swift cannot call,
 * and VIPS_INIT and g_object_unref are macros or need a gpointer; these static inline wrappers fix the
 * arguments we use. Every wrapper is prefixed with the module name.
 */
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <vips/vips.h>

/* VIPS_INIT (a macro): starts libvips once per process. Returns 0 on success. Also turns off the operation
 * cache (it would keep decoded images and our input buffers alive) and runs each operation on one thread
 * (fetch workers already run several at once). */
static inline int cvips_init(const char *program) {
    if (VIPS_INIT(program)) return -1;
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

/* The loader libvips would pick for these bytes (e.g. "VipsForeignLoadPngBuffer"), or NULL if none. */
static inline const char *cvips_loader_for(const void *data, size_t length) {
    return vips_foreign_find_load_buffer(data, length);
}

/* Reads only the header of an image in memory (no pixels decoded): width, height and page count.
 * Returns 0 on success. `data` must stay alive until this returns. */
static inline int cvips_header(const void *data, size_t length, int *width, int *height, int *pages) {
    VipsImage *image = vips_image_new_from_buffer(data, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) return -1;
    *width = vips_image_get_width(image);
    *height = vips_image_get_height(image);
    *pages = vips_image_get_n_pages(image);
    g_object_unref(image);
    return 0;
}

/* Scales an image in memory to fill width×height and crops the centre (first page/frame only), then
 * encodes it as PNG (metadata stripped). On success *png is a g_malloc'd buffer of *png_length bytes, to be
 * freed with cvips_free. Returns 0 on success. */
static inline int cvips_fill_png(const void *data, size_t length, int width, int height, void **png, size_t *png_length) {
    VipsImage *thumbnail = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &thumbnail, width,
                              "height", height,
                              "size", VIPS_SIZE_BOTH,
                              "crop", VIPS_INTERESTING_CENTRE,
                              NULL)) return -1;
    int failed = vips_pngsave_buffer(thumbnail, png, png_length, "strip", TRUE, NULL);
    g_object_unref(thumbnail);
    return failed ? -1 : 0;
}

/* Frees a buffer libvips allocated (cvips_fill_png's output). */
static inline void cvips_free(void *buffer) {
    g_free(buffer);
}

/* libvips' last error message(s), then clears them (per thread). The returned text is copied by the caller
 * before the next libvips call. */
static inline const char *cvips_error_take(void) {
    static __thread char copy[512];
    const char *text = vips_error_buffer();
    g_strlcpy(copy, text ? text : "", sizeof copy);
    vips_error_clear();
    return copy;
}

#endif

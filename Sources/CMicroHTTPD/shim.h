#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

/* libmicrohttpd for Swift (kioskd-bridge's HTTP server). Everything here is `static inline`, so
 * the Swift compiler's clang compiles it into the importing module: no C target. Swift cannot
 * call C's variadic functions, so MHD_start_daemon is reached through MHD_OPTION_ARRAY. */

#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* MHD_start_daemon(flags, 0, NULL, NULL, handler, context, MHD_OPTION_ARRAY, options,
 * MHD_OPTION_END): `options` ends with an MHD_OPTION_END item. */
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, MHD_AccessHandlerCallback handler,
                                            void *context, const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* One option item (Swift cannot build the struct's designated initialiser from a macro). */
static inline struct MHD_OptionItem cmhd_option(enum MHD_OPTION option, intptr_t value, void *pointer) {
    struct MHD_OptionItem item;
    item.option = option;
    item.value = value;
    item.ptr_value = pointer;
    return item;
}

/* MHD_OPTION_NOTIFY_CONNECTION's item: the function pointer goes in `value` (as intptr_t). */
static inline struct MHD_OptionItem cmhd_notify_connection_option(MHD_NotifyConnectionCallback callback, void *context) {
    return cmhd_option(MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)callback, context);
}

/* How many request headers are named `name` (case-insensitively): a request with two Origins is
 * refused rather than judged by the first. */
static inline enum MHD_Result cmhd_count_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                             const char *value) {
    (void)kind; (void)value;
    struct { const char *name; unsigned count; } *state = cls;
    if (key != NULL && strcasecmp(key, state->name) == 0) state->count += 1;
    return MHD_YES;
}
static inline unsigned cmhd_count_header(struct MHD_Connection *connection, const char *name) {
    struct { const char *name; unsigned count; } state = { name, 0 };
    MHD_get_connection_values(connection, MHD_HEADER_KIND, cmhd_count_one, &state);
    return state.count;
}

/* The connection's socket, or -1. */
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The constants Swift imports awkwardly (macros of casts). */
static inline ssize_t cmhd_reader_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }
static inline uint64_t cmhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

#endif

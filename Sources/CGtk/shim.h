#ifndef CGTK_SHIM_H
#define CGTK_SHIM_H

/* GTK 4 for Swift (kioskd-prompt only). GTK's type casts, G_CALLBACK and its variadic calls
 * (gtk_accessible_update_property) are C macros or varargs, which Swift cannot call: each
 * one used is wrapped here in a typed `static inline` function, which the Swift compiler's
 * clang compiles into the importing module (no C target). */

#include <dlfcn.h>
#include <gtk/gtk.h>
#include <gdk/x11/gdkx.h>
#include <libintl.h>
#include <locale.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

/* gettext's catalogues changed for this process (another LANGUAGE): glibc caches each message's
 * translation until this counter moves, as GNU gettext's manual says for a program that changes
 * its language while it runs. */
static inline void kp_gettext_language_changed(void) {
    extern int _nl_msg_cat_cntr;
    ++_nl_msg_cat_cntr;
}

static inline GtkWindow *kp_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkLabel *kp_label(GtkWidget *widget) { return GTK_LABEL(widget); }
static inline GtkOverlay *kp_overlay(GtkWidget *widget) { return GTK_OVERLAY(widget); }
static inline GtkBox *kp_box(GtkWidget *widget) { return GTK_BOX(widget); }
static inline GtkDrawingArea *kp_drawing_area(GtkWidget *widget) { return GTK_DRAWING_AREA(widget); }

/* A widget made with the accessible role `role` instead of its class's: AT-SPI gets the role
 * from the widget's GtkATContext, which takes it from the construct-only "accessible-role"
 * property (no setter after construction). Used for the prompt's window (a dialog, not GTK's
 * "window", which AT-SPI reads as a frame) and for the labels drawn as the pad's keys and the
 * offer's button (buttons: touching them does something, through kioskd). */
static inline GtkWidget *kp_window_new_with_role(GtkAccessibleRole role) {
    return GTK_WIDGET(g_object_new(GTK_TYPE_WINDOW, "accessible-role", role, NULL));
}
static inline GtkWidget *kp_label_new_with_role(GtkAccessibleRole role) {
    return GTK_WIDGET(g_object_new(GTK_TYPE_LABEL, "accessible-role", role, NULL));
}

/* The accessible "modal" property (AT-SPI's MODAL state): while the window is up nothing else
 * gets input (kioskd holds every key and touch). */
static inline void kp_set_accessible_modal(GtkWidget *widget, gboolean modal) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_MODAL, modal, -1);
}

/* The accessible name a screen reader reads for a widget. GTK 4.8 sends AT-SPI clients an
 * object:property-change:accessible-name event when it changes on a realized widget; it has no
 * announcement call (gtk_accessible_announce is GTK 4.14's). */
static inline void kp_set_accessible_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

/* gtk_accessible_announce (GTK 4.14 and later: Debian 13 has 4.18, Debian 12 4.8), looked up at run
 * time, so that one build announces where the GTK it runs with can: the screen reader speaks the
 * message in its own voice and settings (AT-SPI's announcement event). Returns FALSE when this GTK
 * has no such call. Priority 1 is GTK_ACCESSIBLE_ANNOUNCEMENT_PRIORITY_MEDIUM. */
static inline gboolean kp_announce(GtkWidget *widget, const char *message) {
    typedef void (*kp_announce_fn)(GtkAccessible *, const char *, int);
    static kp_announce_fn announce = NULL;
    static gboolean looked_up = FALSE;
    if (!looked_up) {
        announce = (kp_announce_fn)dlsym(RTLD_DEFAULT, "gtk_accessible_announce");
        looked_up = TRUE;
    }
    if (announce == NULL) return FALSE;
    announce(GTK_ACCESSIBLE(widget), message, 1);
    return TRUE;
}

/* The accessible description (read after the name). */
static inline void kp_set_accessible_description(GtkWidget *widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

/* GtkOverlay::get-child-position: where an overlay child goes, in the overlay's coordinates. */
typedef gboolean (*kp_child_position_fn)(GtkOverlay *overlay, GtkWidget *child, GdkRectangle *allocation,
                                         gpointer data);
static inline gulong kp_connect_child_position(GtkWidget *overlay, kp_child_position_fn fn, gpointer data) {
    return g_signal_connect_data(overlay, "get-child-position", G_CALLBACK(fn), data, NULL, 0);
}

/* CSS for the whole display (high contrast: every widget of the prompt has a class). */
static inline void kp_add_css(const char *css) {
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css, -1);
    gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
}

/* The first monitor's size in application pixels (under cage: the output, the whole screen);
 * 0×0 when there is none. */
static inline void kp_monitor_size(int *width, int *height) {
    *width = 0;
    *height = 0;
    GListModel *monitors = gdk_display_get_monitors(gdk_display_get_default());
    GdkMonitor *monitor = g_list_model_get_n_items(monitors) > 0 ? g_list_model_get_item(monitors, 0) : NULL;
    if (monitor == NULL) return;
    GdkRectangle geometry;
    gdk_monitor_get_geometry(monitor, &geometry);
    g_object_unref(monitor);
    *width = geometry.width;
    *height = geometry.height;
}

/* The display's backend as GDK names its class: "GdkWaylandDisplay", "GdkX11Display". */
static inline const char *kp_display_type_name(void) {
    GdkDisplay *display = gdk_display_get_default();
    return display != NULL ? G_OBJECT_TYPE_NAME(display) : "";
}

/* The window takes no pointer or touch anywhere: an empty input region on its surface (Wayland's
 * wl_surface.set_input_region, X11's input shape), so every event goes to what is under it. GTK
 * sets a window's input region itself only for client-side shadows, which an undecorated window
 * has none of. Call after the window is realized. */
static inline void kp_set_empty_input_region(GtkWidget *window) {
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
    if (surface == NULL) return;
    cairo_region_t *region = cairo_region_create();
    gdk_surface_set_input_region(surface, region);
    cairo_region_destroy(region);
}

/* gtk4-layer-shell, found at run time (dlsym), never linked: it must be loaded before
 * libwayland-client to work (its shim of libwayland's symbols), which kioskd-prompt arranges by
 * starting the layer's process with LD_PRELOAD (docs/packaging.md). Whether it is loaded: */
static inline gboolean kp_layer_shell_loaded(void) {
    return dlsym(RTLD_DEFAULT, "gtk_layer_init_for_window") != NULL;
}
/* Whether the compositor has the layer-shell protocol (cage 0.1.4 has not). */
static inline gboolean kp_layer_shell_supported(void) {
    gboolean (*supported)(void) = (gboolean (*)(void))dlsym(RTLD_DEFAULT, "gtk_layer_is_supported");
    return supported != NULL && supported();
}
/* Makes `window` (not yet realized) a layer surface over everything: the overlay layer, anchored
 * to all four edges (the whole output), no exclusive zone (-1: it moves nothing, and nothing
 * moves it), never the keyboard's focus. The enum values are gtk4-layer-shell's
 * (GTK_LAYER_SHELL_LAYER_OVERLAY 3, GTK_LAYER_SHELL_KEYBOARD_MODE_NONE 0, its four edges 0 to 3).
 * FALSE when a function is missing (nothing was done). */
static inline gboolean kp_layer_shell_overlay(GtkWindow *window, const char *name_space) {
    void (*init)(GtkWindow *) = (void (*)(GtkWindow *))dlsym(RTLD_DEFAULT, "gtk_layer_init_for_window");
    void (*set_layer)(GtkWindow *, int) = (void (*)(GtkWindow *, int))dlsym(RTLD_DEFAULT, "gtk_layer_set_layer");
    void (*set_anchor)(GtkWindow *, int, gboolean) =
        (void (*)(GtkWindow *, int, gboolean))dlsym(RTLD_DEFAULT, "gtk_layer_set_anchor");
    void (*set_zone)(GtkWindow *, int) =
        (void (*)(GtkWindow *, int))dlsym(RTLD_DEFAULT, "gtk_layer_set_exclusive_zone");
    void (*set_keyboard)(GtkWindow *, int) =
        (void (*)(GtkWindow *, int))dlsym(RTLD_DEFAULT, "gtk_layer_set_keyboard_mode");
    void (*set_namespace)(GtkWindow *, const char *) =
        (void (*)(GtkWindow *, const char *))dlsym(RTLD_DEFAULT, "gtk_layer_set_namespace");
    if (!init || !set_layer || !set_anchor || !set_zone || !set_keyboard || !set_namespace) return FALSE;
    init(window);
    set_layer(window, 3);
    for (int edge = 0; edge < 4; edge++) set_anchor(window, edge, TRUE);
    set_zone(window, -1);
    set_keyboard(window, 0);
    set_namespace(window, name_space);
    return TRUE;
}

/* Whether the display composites (X11: a compositing manager runs), so that a window's
 * translucent pixels show what is under them; Wayland always does. */
static inline gboolean kp_display_is_composited(void) {
    return gdk_display_is_composited(gdk_display_get_default());
}

/* X11: makes `window` (realized, not yet mapped) override-redirect, so that no window manager
 * frames, places, focuses or maximizes it: it is mapped where and as large as it is, over the
 * others. XChangeWindowAttributes is found with dlsym (libX11 is loaded with GTK's X11 backend;
 * kioskd-prompt does not link it itself). FALSE when the window is not an X11 one. */
static inline gboolean kp_x11_override_redirect(GtkWidget *window) {
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
    if (surface == NULL || !GDK_IS_X11_SURFACE(surface)) return FALSE;
    int (*change)(Display *, Window, unsigned long, XSetWindowAttributes *) =
        (int (*)(Display *, Window, unsigned long, XSetWindowAttributes *))dlsym(RTLD_DEFAULT, "XChangeWindowAttributes");
    if (change == NULL) return FALSE;
    XSetWindowAttributes attributes = {0};
    attributes.override_redirect = True;
    change(gdk_x11_display_get_xdisplay(gdk_surface_get_display(surface)), gdk_x11_surface_get_xid(surface),
           CWOverrideRedirect, &attributes);
    return TRUE;
}

/* X11: raises `window` over its siblings (XRaiseWindow, found with dlsym as above). */
static inline void kp_x11_raise(GtkWidget *window) {
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
    if (surface == NULL || !GDK_IS_X11_SURFACE(surface)) return;
    int (*raise_window)(Display *, Window) = (int (*)(Display *, Window))dlsym(RTLD_DEFAULT, "XRaiseWindow");
    int (*flush)(Display *) = (int (*)(Display *))dlsym(RTLD_DEFAULT, "XFlush");
    if (raise_window == NULL || flush == NULL) return;
    Display *display = gdk_x11_display_get_xdisplay(gdk_surface_get_display(surface));
    raise_window(display, gdk_x11_surface_get_xid(surface));
    flush(display);
}

/* The locked regions' process ends with the kioskd-prompt that started it (SIGTERM when its
 * parent goes: prctl's variadic call wrapped); FALSE when the parent is already gone. */
static inline gboolean kp_end_with_parent(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    return getppid() == parent;
}

#endif

import CMoonPangoCairo

// One Swift owner per cairo/pango object, freeing it in deinit. Each owner is confined to
// the thread that made it (cairo contexts and pango objects are not thread-safe).

/// Owns a cairo image surface: either over pixels someone else keeps alive, or with its
/// own buffer (`cairo_image_surface_create`).
package final class CairoSurface {
    package let pointer: OpaquePointer

    package init(drawingInto pixels: BGRAPixels, format: cairo_format_t = CAIRO_FORMAT_ARGB32) throws {
        pointer = try CairoSurface.checked(cairo_image_surface_create_for_data(
            pixels.base, format, Int32(pixels.width), Int32(pixels.height), Int32(pixels.stride)))
    }

    package init(format: cairo_format_t, width: Int, height: Int) throws {
        pointer = try CairoSurface.checked(cairo_image_surface_create(format, Int32(width), Int32(height)))
    }

    deinit { cairo_surface_destroy(pointer) }

    private static func checked(_ surface: OpaquePointer?) throws -> OpaquePointer {
        guard let surface else { throw EngineError("cannot create a drawing surface", kind: .limit) }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw EngineError("cannot create a drawing surface: \(String(cString: cairo_status_to_string(status)))", kind: .limit)
        }
        return surface
    }

    /// Rows of a surface's own buffer; cairo is flushed first and told about the writes after.
    package func withRows(_ body: (UnsafeMutablePointer<UInt8>, _ stride: Int) -> Void) {
        cairo_surface_flush(pointer)
        guard let data = cairo_image_surface_get_data(pointer) else { return }
        body(data, Int(cairo_image_surface_get_stride(pointer)))
        cairo_surface_mark_dirty(pointer)
    }
}

/// Owns a `cairo_t` drawing onto a surface it keeps alive.
package final class CairoContext {
    let pointer: OpaquePointer
    let surface: CairoSurface

    package init(_ surface: CairoSurface) throws {
        guard let cr = cairo_create(surface.pointer) else { throw EngineError("cannot create a drawing context", kind: .limit) }
        (pointer, self.surface) = (cr, surface)
    }

    deinit { cairo_destroy(pointer) }

    package convenience init(drawingInto pixels: BGRAPixels) throws {
        try self.init(CairoSurface(drawingInto: pixels))
    }

    /// Runs `body` with the context and flushes the surface after: the owner (and so the
    /// context) stays alive throughout, which a bare `pointer` read would not guarantee.
    package func draw<T>(_ body: (OpaquePointer) throws -> T) rethrows -> T {
        try withExtendedLifetime(self) {
            defer { cairo_surface_flush(surface.pointer) }
            return try body(pointer)
        }
    }
}

/// Owns one reference to a GObject (pango font map, context or layout).
package final class GObjectReference {
    package let pointer: UnsafeMutableRawPointer

    package init(_ pointer: UnsafeMutableRawPointer?, what: @autoclosure () -> String) throws {
        guard let pointer else { throw EngineError("cannot create \(what())", kind: .limit) }
        self.pointer = pointer
    }

    deinit { g_object_unref(pointer) }

    package var opaque: OpaquePointer { OpaquePointer(pointer) }
}

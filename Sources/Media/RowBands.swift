#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Dispatch

/// Runs a per-pixel loop over whole frames on every core: the rows are cut into one band
/// a core, each band written by one thread only. Small pictures (layer drawings, test
/// frames) stay on the calling thread.
package enum RowBands {
    static let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    /// Below this many pixels a thread costs more than it saves.
    static let minimumPixels = 1 << 17

    /// Calls `body` with ranges that together cover `0..<rows`, at once when `pixels` is large.
    package static func run(rows: Int, pixels: Int, _ body: (Range<Int>) -> Void) {
        let bands = pixels >= minimumPixels ? min(cores, rows) : 1
        guard bands > 1 else { return body(0..<rows) }
        withoutActuallyEscaping(body) { body in
            // Unchecked: the bands write disjoint rows of memory the caller keeps alive until
            // concurrentPerform returns, which is all the body's captures (pixel pointers) reach.
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                body(rows * band / bands..<rows * (band + 1) / bands)
            }
        }
    }
}

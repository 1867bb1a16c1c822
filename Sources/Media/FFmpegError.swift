import CMoonFFmpeg
import CMoonAVShim
#if canImport(Glibc)
import Glibc
#endif

/// An FFmpeg status code turned into a Swift error that says what was being done, to
/// which input, and FFmpeg's own reason.
///
/// Thrown by the engine where FFmpeg fails: opening, probing, decoding, encoding, writing.
/// Show `description`: "clip.mov: open input: moov atom not found (Invalid data found when
/// processing input)".
public struct FFmpegError: Error, CustomStringConvertible, Sendable {
    /// FFmpeg's negative status code (an `AVERROR` value, e.g. −2 for a missing file).
    public let code: Int32
    /// What was being done, in words ("open input", "decode video").
    public let operation: String
    /// Which input or output it concerned (usually a file path); may be empty.
    public let context: String
    /// The last error line FFmpeg logged on this thread ("moov atom not found"), if any.
    public let detail: String

    /// "context: operation: reason", the reason being FFmpeg's logged line and its text
    /// for `code`.
    public var description: String {
        var reason = FFmpegError.text(for: code)
        if !detail.isEmpty, !reason.contains(detail) { reason = "\(detail) (\(reason))" }
        return context.isEmpty ? "\(operation): \(reason)" : "\(context): \(operation): \(reason)"
    }

    /// What kind of failure `code` is (see ``kind(code:operation:context:)``).
    public var kind: EngineError.Kind { FFmpegError.kind(code: code, operation: operation, context: context) }
    /// The input or output concerned (``context``), or nil when there is none.
    public var subject: String? { context.isEmpty ? nil : context }

    /// The kind of an FFmpeg failure: by the code where it says (a missing file, a file
    /// system error, memory, an interrupt, a missing codec), else by the side that failed
    /// (writing an output is `encode`), else invalid data is `decode`, and so is the rest of
    /// the reading side; what is left is a wrong setting (`EINVAL`) or an engine invariant.
    public static func kind(code: Int32, operation: String, context: String) -> EngineError.Kind {
        switch code {
        case -ENOENT: return .notFound
        case -EIO, -EACCES, -EPERM, -ENOSPC, -EROFS, -EISDIR, -ENOTDIR, -EDQUOT, -EEXIST, -EMFILE, -ENFILE, -EFBIG:
            return .io
        case -ENOMEM: return .limit
        case MOON_AVERROR_EXIT, -EINTR: return .cancelled
        case MOON_AVERROR_DECODER_NOT_FOUND, MOON_AVERROR_ENCODER_NOT_FOUND, -ENOSYS: return .unsupported
        default: break
        }
        let writing = ["encod", "writing", "finishing", "closing", "creating", "header"].contains { operation.contains($0) }
        if writing || context.hasPrefix("output") { return .encode }
        if code == MOON_AVERROR_INVALIDDATA || code == MOON_AVERROR_EOF { return .decode }
        if ["decod", "reading", "opening", "seek"].contains(where: { operation.contains($0) }) || context.hasPrefix("input") {
            return .decode
        }
        return code == MOON_AVERROR_EINVAL ? .invalidArgument : .internal
    }

    static func text(for code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        moon_av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func lastLogLine() -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        moon_av_last_log(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Checks an FFmpeg return code; negative codes throw with context. EAGAIN and EOF are
/// results for the callers that expect them, which test for them before calling this.
@discardableResult
package func check(_ code: Int32, _ operation: @autoclosure () -> String, context: @autoclosure () -> String = "") throws -> Int32 {
    guard code < 0 else { return code }
    throw FFmpegError(code: code, operation: operation(), context: context(), detail: FFmpegError.lastLogLine())
}

/// FFmpeg's log is captured (its error lines feed `FFmpegError.detail`) rather than printed,
/// so users see one clear line instead of FFmpeg's chatter.
public enum FFmpegLog {
    /// Routes FFmpeg's log through the engine (process-wide, `av_log_set_callback`): error
    /// lines are kept per thread for `FFmpegError.detail`, and nothing is printed. Exports and
    /// hosts call it themselves; call it once at start-up to quiet other FFmpeg work too.
    public static func capture() {
        moon_av_log_capture(AV_LOG_QUIET)
    }
}

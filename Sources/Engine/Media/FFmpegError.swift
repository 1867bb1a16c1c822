import CMoonFFmpeg
import CMoonAVShim

/// An FFmpeg status code turned into a Swift error that says what was being done, to
/// which input, and FFmpeg's own reason.
public struct FFmpegError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let operation: String
    public let context: String
    /// The last error line FFmpeg logged on this thread ("moov atom not found"), if any.
    public let detail: String

    public var description: String {
        var reason = FFmpegError.text(for: code)
        if !detail.isEmpty, !reason.contains(detail) { reason = "\(detail) (\(reason))" }
        return context.isEmpty ? "\(operation): \(reason)" : "\(context): \(operation): \(reason)"
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
func check(_ code: Int32, _ operation: @autoclosure () -> String, context: @autoclosure () -> String = "") throws -> Int32 {
    guard code < 0 else { return code }
    throw FFmpegError(code: code, operation: operation(), context: context(), detail: FFmpegError.lastLogLine())
}

/// FFmpeg's log is captured (its error lines feed `FFmpegError.detail`) rather than printed,
/// so users see one clear line instead of FFmpeg's chatter.
public enum FFmpegLog {
    public static func capture(printingUpTo level: Int32 = AV_LOG_QUIET) {
        moon_av_log_capture(level)
    }
}

/// An error of the engine about the user's input, worded for the user.
public struct EngineError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
